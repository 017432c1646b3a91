package observer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/observer"
	"github.com/cuahq/cua/internal/redact"
)

// seededSecret is registered with every bundle's redactor and the
// observer's canaries; it is written into events, outputs and a tampered
// record, and must appear in no served byte.
const seededSecret = "canary-Zx9Qw7Lm3Np5Rt8V-teller"

// gateDecision is the handoff gate's decision in the r-tampered run.
const gateDecision = "Approve the transfer of 250.00 from 12345-S to 12345-C"

// bundleSpec says what a test bundle holds.
type bundleSpec struct {
	id         string
	capability string
	status     domain.RunStatus
	started    time.Time
	shots      [][]byte // screenshots/step-001.png, …; events name them
	receipt    map[string]any
	docs       map[string]any // other JSON documents: gate.json, plan.json
	effects    *domain.Effects
	drift      float64
	noRecord   bool // a run still going: no record.json, no manifest
}

// writeBundle writes a real bundle with the evidence package's writer
// under dataDir/runs/<id>/ and returns its directory.
func writeBundle(tb testing.TB, dataDir string, b bundleSpec) string {
	tb.Helper()
	red := redact.New(redact.WithLiterals(seededSecret))
	bun, err := evidence.Open(dataDir, b.id, red)
	if err != nil {
		tb.Fatal(err)
	}
	at := b.started
	app := func(actor domain.Actor, step string, p evidence.Payload) {
		tb.Helper()
		at = at.Add(150 * time.Millisecond)
		if err := bun.Append(evidence.NewEvent(at, actor, step, p)); err != nil {
			tb.Fatal(err)
		}
	}
	app(domain.ActorAutomation, "", evidence.RunStarted{Capability: b.capability, ContentHash: "sha256:abc", BaseURL: "http://127.0.0.1:9/"})
	var steps []domain.StepResult
	for i, shot := range b.shots {
		step := fmt.Sprintf("s%d", i+1)
		name := fmt.Sprintf("step-%03d.png", i+1)
		if err := os.MkdirAll(filepath.Join(bun.Dir(), "screenshots"), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bun.Dir(), "screenshots", name), shot, 0o600); err != nil {
			tb.Fatal(err)
		}
		actor, epoch := domain.ActorAutomation, uint64(1)
		if i == 1 {
			actor, epoch = domain.ActorHuman, 2
		}
		app(actor, step, evidence.ActionDispatched{Action: domain.ActionType("fill"), Risk: domain.RiskSafe, Epoch: epoch,
			Role: "textbox", Name: "Member ID", Value: "typed " + seededSecret})
		at = at.Add(100 * time.Millisecond)
		ev := evidence.Event{At: at.UTC().Format(time.RFC3339Nano), Type: "step_finished", Actor: actor, StepID: step,
			Data: map[string]any{"status": "ok", "duration_ms": 42, "screenshot": "screenshots/" + name}}
		if err := bun.Append(ev); err != nil {
			tb.Fatal(err)
		}
		steps = append(steps, domain.StepResult{ID: step, Action: "fill", Status: "ok", DurationMS: 42, Attempts: 1})
	}
	app(domain.ActorAutomation, "", evidence.RunFinished{Status: b.status, Outcome: "member_found"})
	if b.noRecord {
		if err := bun.Sync(); err != nil {
			tb.Fatal(err)
		}
		return bun.Dir()
	}
	rec := &domain.RunRecord{SchemaVersion: 1, RunID: b.id, Capability: b.capability, ContentHash: "sha256:abc", Status: b.status,
		Outcome: "member_found", Effects: b.effects, DriftScore: b.drift, StartedAt: b.started.UTC().Format(time.RFC3339),
		FinishedAt: at.UTC().Format(time.RFC3339), DurationMS: at.Sub(b.started).Milliseconds(), Steps: steps,
		Outputs: map[string]any{"member_name": "Ada Lovelace", "note": "token " + seededSecret}}
	if err := bun.WriteRecord(rec); err != nil {
		tb.Fatal(err)
	}
	docs := map[string]any{}
	for k, v := range b.docs {
		docs[k] = v
	}
	if b.receipt != nil {
		docs["receipt.json"] = b.receipt
	}
	for name, doc := range docs {
		raw, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bun.Dir(), name), raw, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	if err := bun.Close(); err != nil {
		tb.Fatal(err)
	}
	if rep := evidence.Verify(bun.Dir(), []string{seededSecret}); !rep.ShareReady {
		tb.Fatalf("test bundle %s is not share_ready: %v", b.id, rep.Reasons)
	}
	return bun.Dir()
}

// testPNG is a real PNG: w×h, filled with c, a darker band for structure.
func testPNG(tb testing.TB, w, h int, c color.RGBA) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			px := c
			if y > h/3 && y < h/2 {
				px = color.RGBA{R: c.R / 2, G: c.G / 2, B: c.B / 2, A: 255}
			}
			img.SetRGBA(x, y, px)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// testBundle is one observer serving a data dir, for one test.
type testBundle struct {
	dataDir string
	srv     *observer.Server
	url     string
}

// library writes the standard set of runs into a new data dir:
// r-ok (share_ready, two screenshots, receipt), r-plain (no screenshots,
// no receipt), r-running (no record, no manifest) and r-tampered (its
// record rewritten with the secret after it was sealed).
func library(tb testing.TB) string {
	tb.Helper()
	dataDir := tb.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	writeBundle(tb, dataDir, bundleSpec{id: "r-ok", capability: "member.lookup@1.0.0", status: domain.StatusSuccess, started: t0,
		shots:   [][]byte{testPNG(tb, 320, 200, color.RGBA{R: 40, G: 120, B: 200, A: 255}), testPNG(tb, 320, 200, color.RGBA{R: 200, G: 120, B: 40, A: 255})},
		receipt: map[string]any{"outcome": "completed", "run_status": "SUCCESS", "effects": []any{map[string]any{"step": "s2", "risk": "elevated", "effect": "confirmed"}}},
		effects: &domain.Effects{Sent: true, Steps: []domain.StepEffect{{Step: "s2", Risk: domain.RiskElevated, Effect: domain.EffectConfirmed}}}})
	writeBundle(tb, dataDir, bundleSpec{id: "r-plain", capability: "member.lookup@1.0.0", status: domain.StatusNeedsHuman,
		started: t0.Add(time.Hour), drift: 0.5})
	writeBundle(tb, dataDir, bundleSpec{id: "r-running", capability: "transfer@2.0.0", status: domain.StatusRunning,
		started: t0.Add(2 * time.Hour), noRecord: true})
	dir := writeBundle(tb, dataDir, bundleSpec{id: "r-tampered", capability: "transfer@2.0.0", status: domain.StatusFailed,
		started: t0.Add(3 * time.Hour), receipt: map[string]any{"status": "stopped_at_gate", "gate_record": "gate.json"},
		docs: map[string]any{"gate.json": map[string]any{"step": "submit", "decision": gateDecision},
			"plan.json": map[string]any{"allowed_actions": []any{"fill", "click"}, "stop_condition": "gate submit"}}})
	raw, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		tb.Fatal(err)
	}
	raw = bytes.Replace(raw, []byte(`"Ada Lovelace"`), []byte(`"`+seededSecret+`"`), 1)
	if err := os.WriteFile(filepath.Join(dir, "record.json"), raw, 0o600); err != nil {
		tb.Fatal(err)
	}
	return dataDir
}

// serve opens an observer on 127.0.0.1:0 over dataDir with x's exposure.
func serve(tb testing.TB, dataDir string, x observer.Exposure, only string) *testBundle {
	tb.Helper()
	if x.Addr == "" {
		x.Addr = "127.0.0.1:0"
	}
	plan, err := observer.ValidateExposure(x)
	if err != nil {
		tb.Fatal(err)
	}
	lib, err := observer.NewLibrary(observer.LibraryOptions{RunsDir: filepath.Join(dataDir, "runs"), Only: only, Safe: plan.Safe,
		Canaries: []string{seededSecret}})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := observer.NewServer(observer.ServerOptions{Plan: plan, Library: lib})
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return &testBundle{dataDir: dataDir, srv: srv, url: srv.URL()}
}

// response is one answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends method path to tb's server with an optional Host override.
func (b *testBundle) do(tb testing.TB, method, path, host string) response {
	tb.Helper()
	req, err := http.NewRequest(method, b.url+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func (b *testBundle) get(tb testing.TB, path string) response {
	return b.do(tb, http.MethodGet, path, "")
}

// contains reports whether body holds s.
func contains(body []byte, s string) bool { return strings.Contains(string(body), s) }
