package evidence_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/redact"
)

func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.NRGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteScreenshot(t *testing.T) {
	t.Parallel()
	b, err := evidence.Open(t.TempDir(), "run-shot", redact.New())
	if err != nil {
		t.Fatal(err)
	}
	shot := tinyPNG(t)
	rel, err := b.WriteScreenshot(evidence.ScreenshotName(1), shot)
	if err != nil || rel != "screenshots/step-001.png" {
		t.Fatalf("WriteScreenshot = %q, %v; want screenshots/step-001.png", rel, err)
	}
	got, err := os.ReadFile(filepath.Join(b.Dir(), rel))
	if err != nil || !bytes.Equal(got, shot) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	tests := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"rewriting a screenshot", "step-001.png", shot, "already written"},
		{"a path", "../step-002.png", shot, "bad screenshot name"},
		{"another name", "record.json", shot, "bad screenshot name"},
		{"not a PNG", "step-002.png", []byte("GIF89a"), "not a PNG"},
	}
	for _, tt := range tests {
		if _, err := b.WriteScreenshot(tt.file, tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteScreenshot("step-002.png", shot); err == nil {
		t.Error("a closed bundle took a screenshot")
	}
	entries, _ := os.ReadDir(filepath.Join(b.Dir(), evidence.ScreenshotDir))
	if len(entries) != 1 {
		t.Errorf("screenshots/ holds %d entries, want 1 (no temp file left)", len(entries))
	}
}

// TestVerifyNamesAChangedScreenshot: the manifest covers screenshots/, so
// one changed byte of a PNG makes the bundle unshareable, naming the file.
func TestVerifyNamesAChangedScreenshot(t *testing.T) {
	t.Parallel()
	b, err := evidence.Open(t.TempDir(), "run-shot", redact.New())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := b.WriteScreenshot(evidence.ScreenshotName(1), tinyPNG(t))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := b.Append(evidence.NewEvent(at, domain.ActorAutomation, "s1", evidence.StepFinished{Status: "ok", Screenshot: rel})); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := evidence.Verify(b.Dir(), nil); !rep.ShareReady {
		t.Fatalf("untouched bundle not share_ready: %v", rep.Reasons)
	}
	p := filepath.Join(b.Dir(), rel)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x01
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := evidence.Verify(b.Dir(), nil)
	if rep.ShareReady || rep.ManifestOK {
		t.Fatalf("a changed screenshot verified: %+v", rep)
	}
	want := "screenshots/step-001.png: sha256 or size differs from the manifest"
	if !strings.Contains(strings.Join(rep.Reasons, "\n"), want) {
		t.Errorf("reasons %q do not name %q", rep.Reasons, want)
	}
}

func TestWriteDocument(t *testing.T) {
	t.Parallel()
	const canary = "Teller-Pass-9f3kq2zzW7"
	b, err := evidence.Open(t.TempDir(), "run-doc", redact.New(redact.WithLiterals(canary)))
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"outcome": "completed", "note": "typed " + canary}
	for _, name := range []string{evidence.PlanFile, evidence.ReceiptFile, evidence.GateFile} {
		if err := b.WriteDocument(name, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, err := os.ReadFile(filepath.Join(b.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), canary) || !strings.Contains(string(raw), `"completed"`) {
			t.Errorf("%s = %s, want it redacted", name, raw)
		}
	}
	for _, name := range []string{"record.json", "events.jsonl", evidence.ManifestFile, "../receipt.json", "notes.json"} {
		if err := b.WriteDocument(name, doc); err == nil {
			t.Errorf("WriteDocument(%q) accepted", name)
		}
	}
	for _, name := range []string{evidence.ReceiptFile, evidence.ScreenshotDir} {
		if err := b.AppendLine(name, doc); err == nil {
			t.Errorf("AppendLine(%q) accepted", name)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteDocument(evidence.ReceiptFile, doc); err == nil {
		t.Error("a closed bundle took a document")
	}
	if rep := evidence.Verify(b.Dir(), []string{canary}); !rep.ShareReady {
		t.Errorf("not share_ready: %v", rep.Reasons)
	}
}
