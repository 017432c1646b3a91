package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// TestReplayDesktopBinary replays the Mousepad capability with the real
// binary the way a user types it: --launch starts Mousepad in a private
// Xvfb and AT-SPI session the command starts and stops itself, and the
// run's bundle verifies share-ready like a web run's.
func TestReplayDesktopBinary(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	file := "../internal/surface/desktop/testdata/capabilities/mousepad.write_note.yaml"
	// A deployment key signs the bundle: an unsigned one is not share-ready.
	if k := runBin(t, nil, "keys", "init", "--data-dir", data); k.code != 0 {
		t.Fatalf("keys init: exit %d\n%s%s", k.code, k.stdout, k.stderr)
	}
	r := runBin(t, nil, "replay", file, "--base-url", "http://mousepad", "--launch", "mousepad --disable-server",
		"-i", "note=Call the member back at 3pm", "--data-dir", data, "--json")
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec.Status != domain.StatusSuccess {
		t.Fatalf("replay: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if rec.Outputs["text"] != "Call the member back at 3pm" {
		t.Errorf("text = %v, want the note", rec.Outputs["text"])
	}
	v := runBin(t, nil, "verify", rec.RunID, "--data-dir", data, "--json")
	var rep evidence.Report
	if err := json.Unmarshal([]byte(v.stdout), &rep); err != nil || v.code != 0 || !rep.ShareReady {
		t.Fatalf("verify: exit %d %v %+v\n%s", v.code, err, rep, v.stderr)
	}
	shots := 0
	for _, f := range rep.Files {
		if strings.HasPrefix(f.Path, "screenshots/") {
			shots++
		}
	}
	if shots == 0 {
		t.Errorf("the desktop run wrote no screenshots: %+v", rep.Files)
	}
}
