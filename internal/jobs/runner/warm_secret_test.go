package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/runner"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// operatorID is the signed-on operator id MemberDesk shows in its welcome
// banner ("Signed on as OP1001"): a secret (CUA_SECRET_COREBANK_OPERATOR).
const operatorID = "OP1001"

// welcomeCapability opens MemberDesk's welcome page, signing on first
// when the session is not signed on, and checks the page: its step's
// screenshot shows the banner with the operator id.
const welcomeCapability = `schema_version: 1
id: memberdesk.welcome
version: 1.0.0
title: Open the welcome page
description: Opens MemberDesk, signed on, and checks the welcome page.
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
prerequisites:
  - capability: corebank.auth.sign_on@1.0.0
    when:
      node_exists: {role: button, name: Sign on, scope: {frame: content}}
steps:
  - id: welcome
    action: assert
    postcondition:
      node_exists: {role: heading, name: Welcome, scope: {frame: content}}
`

// TestWarmSessionKeepsItsSecrets is issue 23 item 3: two runs on one warm
// session (real Chromium, MemberDesk). The second starts signed on and
// resolves no secret, yet its evidence screenshot of the welcome page has
// the banner with the operator id blacked out exactly where the first
// run's has, and neither its record, its events nor its log holds the id.
func TestWarmSessionKeepsItsSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	signOn, err := os.ReadFile(filepath.Join(examples, "corebank.auth.sign_on.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"corebank.auth.sign_on.yaml": signOn, "memberdesk.welcome.yaml": []byte(welcomeCapability)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pipeline.SealPinned(filepath.Join(dir, "memberdesk.welcome.yaml"), dir); err != nil {
		t.Fatal(err)
	}
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	welcome, err := capability.Load(filepath.Join(dir, "memberdesk.welcome.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	app := startApp(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	data := t.TempDir()
	var logs lockedBuffer
	r := runner.New(ctx, runner.Config{DataDir: data, Secrets: signOnSecrets(t), WarmTTL: time.Minute, AllowOrigins: []string{app.URL()},
		Logger: func(red *redact.Redactor) *slog.Logger {
			return slog.New(redact.NewHandler(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}), red))
		}})
	defer r.Close()

	var shots [2]image.Image
	for i, id := range []string{"cold", "warm"} {
		// At full evidence (the runner passes the job's level on), so the
		// assert step has a screenshot of its own.
		rec, err := r.Run(ctx, jobs.Request{RunID: id, Capability: welcome, Library: lib, BaseURL: app.URL(), Evidence: domain.EvidenceFull})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != domain.StatusSuccess {
			t.Fatalf("run %s: %s %s %s", id, rec.Status, rec.FailureCode, rec.Message)
		}
		runDir := filepath.Join(data, "runs", id)
		events := readFile(t, filepath.Join(runDir, "events.jsonl"))
		if got, want := strings.Contains(events, "enter_operator"), i == 0; got != want {
			t.Fatalf("run %s signed on: %v, want %v (the second run must start warm)", id, got, want)
		}
		for _, f := range []string{"record.json", "events.jsonl", "receipt.json", "plan.json"} {
			if text := readFile(t, filepath.Join(runDir, f)); redact.Reveals(text, operatorID) {
				t.Errorf("run %s: %s reveals the operator id", id, f)
			}
		}
		shots[i] = decodePNG(t, filepath.Join(runDir, stepScreenshot(t, events, "welcome")))
	}
	if redact.Reveals(logs.String(), operatorID) {
		t.Error("the runs' log reveals the operator id")
	}

	// The cold run resolved the id itself: its picture masks the banner.
	// The warm run's must be black in the same place.
	box := maskBox(shots[0])
	if box.Dx() < 20 || box.Dy() < 8 {
		t.Fatalf("the cold run's welcome screenshot masks nothing like a banner (black box %v)", box)
	}
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if !isBlack(shots[1].At(x, y)) {
				t.Fatalf("warm run: the banner (box %v) is not masked: pixel %d,%d shows %v", box, x, y, shots[1].At(x, y))
			}
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stepScreenshot returns the screenshot the step_finished event of step
// records.
func stepScreenshot(t *testing.T, events, step string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(events))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type   string `json:"type"`
			StepID string `json:"step_id"`
			Data   struct {
				Screenshot string `json:"screenshot"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "step_finished" && e.StepID == step && e.Data.Screenshot != "" {
			return e.Data.Screenshot
		}
	}
	t.Fatalf("no screenshot for step %s", step)
	return ""
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func isBlack(c interface{ RGBA() (r, g, b, a uint32) }) bool {
	r, g, b, a := c.RGBA()
	return r == 0 && g == 0 && b == 0 && a == 0xffff
}

// maskBox returns the first solid rectangle of opaque black pixels at
// least 40 pixels wide in img: a mask MaskPNG painted (the page's black
// text has no such run).
func maskBox(img image.Image) image.Rectangle {
	b := img.Bounds()
	black := func(x, y int) bool { return isBlack(img.At(x, y)) }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			x1 := x
			for x1 < b.Max.X && black(x1, y) {
				x1++
			}
			if x1-x < 40 {
				x = x1
				continue
			}
			y1 := y + 1
			for ; y1 < b.Max.Y; y1++ {
				for k := x; k < x1; k++ {
					if !black(k, y1) {
						return image.Rect(x, y, x1, y1)
					}
				}
			}
			return image.Rect(x, y, x1, y1)
		}
	}
	return image.Rectangle{}
}
