package capability

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Size caps of the files cua reads. A file over its cap is refused, never
// read in full.
const (
	// MaxFileSize bounds a capability file.
	MaxFileSize = 4 << 20
	// MaxApprovalSize bounds an approval record (--approval FILE).
	MaxApprovalSize = 1 << 20
	// MaxSecretsSize bounds a secrets file (--secrets FILE).
	MaxSecretsSize = 1 << 20
)

// ErrNotRegular is wrapped by ReadBounded's error for a path that is not a
// regular file (a device such as /dev/zero, a FIFO, a socket, a directory,
// or a symlink to one of those).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by ReadBounded's error for a file over its cap.
var ErrTooLarge = errors.New("file too large")

// ReadBounded reads the regular file at path, at most limit bytes. It
// refuses at once, naming path, anything that is not a regular file (a
// symlink is followed, and its target must be regular): the file is
// checked before it is opened and opened non-blocking, so a FIFO never
// blocks and /dev/zero never fills memory. A file longer than limit
// (checked on the bytes read, not only on the size the file system
// reports) is refused with ErrTooLarge. Safe for concurrent use.
func ReadBounded(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, st.Size(), limit)
	}
	// O_NONBLOCK: if the path was swapped for a FIFO since Stat, open does
	// not wait for a writer; the Stat of the open file then refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !fst.Mode().IsRegular() {
		return nil, notRegular(path, fst.Mode())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", path, ErrTooLarge, limit)
	}
	return data, nil
}

func notRegular(path string, m fs.FileMode) error {
	kind := "special file"
	switch {
	case m.IsDir():
		kind = "directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "FIFO"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeCharDevice != 0:
		kind = "character device"
	case m&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("%s: %w (a %s)", path, ErrNotRegular, kind)
}
