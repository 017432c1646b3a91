package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// DesktopSkipped is the detail of a desktop stage on a machine that cannot
// start a desktop session.
const DesktopSkipped = "skipped: no desktop session (Xvfb/AT-SPI not running)"

// desktopNote is what the desktop stage types, and must read back.
const desktopNote = "Call the member back at 3pm"

// desktopNeeds are the programs a private desktop session runs: the X
// server, the session bus that starts AT-SPI, the AT-SPI bus and the
// application the capability drives.
var desktopNeeds = []string{"Xvfb", "dbus-daemon", "/usr/libexec/at-spi-bus-launcher", "mousepad"}

// desktopSession reports whether this machine can run the desktop stage:
// an X display ($DISPLAY) or Xvfb, with D-Bus, AT-SPI and Mousepad.
func desktopSession() bool {
	for _, p := range desktopNeeds {
		if p == "Xvfb" && os.Getenv("DISPLAY") != "" {
			continue
		}
		if _, err := exec.LookPath(p); err != nil {
			return false
		}
	}
	return true
}

// desktopStage replays the desktop capability (Mousepad: write a note and
// read it back) with the demo's binary as a user types it: `cua replay
// --launch` starts Mousepad in a private Xvfb and AT-SPI session and stops
// it after. Its bundle lands under <data-dir>/runs, so the last stage
// verifies it with the web runs. On a machine without a desktop session
// the stage passes as skipped, saying so ([DesktopSkipped]).
func (e *env) desktopStage(ctx context.Context) *Result {
	r := &Result{Stage: Stage{Name: "desktop: Mousepad note over AT-SPI", Capability: "mousepad.write_note",
		Inputs: map[string]string{"note": desktopNote}, WantStatus: domain.StatusSuccess,
		WantOutputs: map[string]string{"text": desktopNote}, WantDispatches: -1}}
	if !desktopSession() {
		r.Pass, r.Skipped, r.Detail = true, true, DesktopSkipped
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, e.cfg.Bin, "replay", e.cfg.Desktop, "--base-url", "http://mousepad",
		"--launch", "mousepad --disable-server", "-i", "note="+desktopNote, "--data-dir", e.cfg.DataDir, "--json")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUA_DATA_DIR=") {
			c.Env = append(c.Env, kv)
		}
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	var rec domain.RunRecord
	if jerr := json.Unmarshal(out, &rec); jerr != nil {
		return r.fail("cua replay %s: %v %v: %s", e.cfg.Desktop, err, jerr, lastLine(stderr.String()))
	}
	r.Record, r.Pass = &rec, true
	if p := checkRecord(r.Stage, &rec); p != "" {
		r.fail("%s", p)
	}
	if r.Pass {
		r.Detail = fmt.Sprintf("%s; typed and read back %q in a private Xvfb and AT-SPI session", detail(&rec), desktopNote)
	}
	return r
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
