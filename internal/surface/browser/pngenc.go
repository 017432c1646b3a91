package browser

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
)

// pngMagic starts every PNG file.
const pngMagic = "\x89PNG\r\n\x1a\n"

// encodePNG encodes a masked screenshot. An opaque *image.RGBA (what
// Chromium's RGB PNGs decode to, and stay after black boxes are painted)
// is written as 8-bit RGB with the Up filter on every row and zlib's
// fastest level: a screen is mostly rows that repeat the one above, so
// one fixed filter compresses it about as well as image/png's per-row
// choice among five (which costs it three quarters of its time) in about
// a quarter of the time. Any other image goes through image/png.
func encodePNG(img image.Image) ([]byte, error) {
	m, ok := img.(*image.RGBA)
	if !ok || !m.Opaque() || m.Rect.Empty() {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, img); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	var out bytes.Buffer
	out.Grow(w * h / 8)
	out.WriteString(pngMagic)
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits per sample, truecolour; deflate, adaptive filtering, no interlace
	writeChunk(&out, "IHDR", ihdr)
	var idat bytes.Buffer
	zw, err := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(zw, 64<<10)
	const filterUp = 2
	prev, raw := make([]byte, 3*w), make([]byte, 3*w) // the row above starts as zeros
	line := make([]byte, 1+3*w)
	line[0] = filterUp
	for y := range h {
		off := m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y+y)
		row := m.Pix[off : off+4*w]
		for x := range w {
			raw[3*x], raw[3*x+1], raw[3*x+2] = row[4*x], row[4*x+1], row[4*x+2]
		}
		for i, v := range raw {
			line[1+i] = v - prev[i]
		}
		if _, err := bw.Write(line); err != nil {
			return nil, err
		}
		prev, raw = raw, prev
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes(), nil
}

// writeChunk appends one PNG chunk (length, type, data, CRC) to w.
func writeChunk(w *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	for _, b := range [][]byte{n[:], []byte(typ), data, sum[:]} {
		w.Write(b)
	}
}

// pngBounds returns the image rectangle of PNG data from its header.
func pngBounds(data []byte) (image.Rectangle, error) {
	c, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return image.Rectangle{}, fmt.Errorf("decode: %w", err)
	}
	return image.Rect(0, 0, c.Width, c.Height), nil
}
