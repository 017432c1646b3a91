package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/model/openai"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

// base is the target every sim flow is served under.
const base = "http://127.0.0.1/app"

// runID names the evidence directory of a run under its DataDir.
const runID = "discover-test"

// Bounds every adversarial run is held to: the test's own deadline, and how
// long a run may take at most (well before that deadline). Each step is an
// HTTP round trip to a local fake and a sim dispatch: a run of a dozen
// steps takes tens of milliseconds under -race. Both bounds only catch a
// hang, so they are generous: CI runs every package at once on 2 shared
// cores, where a run can be a hundred times slower than here, and a passing
// run never waits for them.
const (
	testDeadline = 120 * time.Second
	runBound     = 60 * time.Second
)

// usage is what every scripted reply charges unless a test says otherwise.
var usage = model.Usage{InputTokens: 100, OutputTokens: 20}

// testBundle is one adversarial run: a fake OpenAI-compatible endpoint
// scripted by stubs, the real openai adapter pointed at it (wrapped to
// record the port-level requests), a context with a deadline, and the live
// progress reports.
type testBundle struct {
	srv      *modeltest.Server
	model    *recordingModel
	ctx      context.Context
	progress *progressLog
}

func setup(t *testing.T, stubs ...modeltest.Stub) *testBundle {
	t.Helper()
	srv := modeltest.OpenAIServer(t, stubs...)
	m, err := openai.New(openai.Config{
		BaseURL:    srv.BaseURL(),
		APIKey:     "test",
		Model:      "test-model",
		MaxRetries: 1,
		Timeout:    10 * time.Second,
	})
	if err != nil {
		t.Fatalf("openai.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testDeadline)
	t.Cleanup(cancel)
	return &testBundle{srv: srv, model: &recordingModel{Model: m}, ctx: ctx, progress: &progressLog{}}
}

// config is the baseline configuration: autonomy 3, a dozen steps, a short
// verification wait, progress recorded.
func (b *testBundle) config(s surface.Surface, goal string) agent.Config {
	return agent.Config{
		Model:      b.model,
		Surface:    s,
		Goal:       goal,
		BaseURL:    base,
		RunID:      runID,
		Autonomy:   agent.LevelAuto,
		Budget:     agent.Budget{MaxSteps: 12},
		VerifyWait: 50 * time.Millisecond,
		Progress:   b.progress.add,
	}
}

// run runs cfg under the bundle's context and fails the test unless the
// run returned without error well within runBound.
func (b *testBundle) run(t *testing.T, cfg agent.Config) *agent.Result {
	t.Helper()
	return b.runIn(t, b.ctx, cfg)
}

// runIn is run under ctx, a context derived from the bundle's.
func (b *testBundle) runIn(t *testing.T, ctx context.Context, cfg agent.Config) *agent.Result {
	t.Helper()
	start := time.Now()
	res, err := agent.Run(ctx, cfg)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res == nil {
		t.Fatal("Run returned a nil result and no error")
	}
	if elapsed > runBound {
		t.Errorf("the run took %s, want under %s", elapsed, runBound)
	}
	if b.ctx.Err() != nil {
		t.Errorf("the test's deadline passed before the run ended: %v", b.ctx.Err())
	}
	t.Logf("run ended %s (%q) after %d steps, %d tokens, in %s", res.Status, res.Reason, res.Steps, res.Tokens, elapsed.Round(time.Millisecond))
	return res
}

// userText returns the user message of request i the fake received, as the
// model reads it: goal, context, observation, correction.
func (b *testBundle) userText(t *testing.T, i int) string {
	t.Helper()
	reqs := b.srv.Requests()
	if i >= len(reqs) {
		t.Fatalf("request %d asked for, the fake received %d", i+1, len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatalf("request %d: body is not JSON: %v", i+1, err)
	}
	for _, m := range body.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if err := json.Unmarshal(m.Content, &s); err == nil {
			return s
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			t.Fatalf("request %d: user content is neither text nor parts: %s", i+1, m.Content)
		}
		var out []string
		for _, p := range parts {
			out = append(out, p.Text)
		}
		return strings.Join(out, "\n")
	}
	t.Fatalf("request %d has no user message", i+1)
	return ""
}

// requests returns how many requests the fake received.
func (b *testBundle) requests() int { return len(b.srv.Requests()) }

// recordingModel is the real adapter with the port-level requests kept, so
// a test can check what the agent asked for (Purpose, Screenshot) beside
// what went over the wire.
type recordingModel struct {
	model.Model
	mu   sync.Mutex
	reqs []model.Request
}

var _ model.Model = (*recordingModel)(nil)

func (m *recordingModel) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.Model.Decide(ctx, req)
}

func (m *recordingModel) requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]model.Request(nil), m.reqs...)
}

func (m *recordingModel) purposes() []string {
	var out []string
	for _, r := range m.requests() {
		out = append(out, r.Purpose)
	}
	return out
}

// progressLog keeps the live progress lines of a run.
type progressLog struct {
	mu   sync.Mutex
	reps []agent.StepReport
}

func (p *progressLog) add(r agent.StepReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reps = append(p.reps, r)
}

func (p *progressLog) verdicts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.reps {
		out = append(out, r.Verdict)
	}
	return out
}

func (p *progressLog) reports() []agent.StepReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]agent.StepReport(nil), p.reps...)
}

// Turns, in the strict contract: every property present, unused ones null.

func ptr[T any](v T) *T { return &v }

func turnJSON(t agent.Turn) string {
	if t.Thought == "" {
		t.Thought = "scripted"
	}
	raw, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

func click(el int) string {
	return turnJSON(agent.Turn{Action: agent.KindClick, Element: ptr(el), Expect: &agent.Expect{Kind: "none"}})
}

func clickExpecting(el int, text string) string {
	return turnJSON(agent.Turn{Action: agent.KindClick, Element: ptr(el), Expect: &agent.Expect{Kind: "text_appears", Text: text}})
}

func typeText(el int, text, input string) string {
	t := agent.Turn{Action: agent.KindType, Element: ptr(el), Text: ptr(text), Expect: &agent.Expect{Kind: "value_is", Text: text}}
	if input != "" {
		t.Input = ptr(input)
	}
	return turnJSON(t)
}

func typeSecret(el int, name string) string {
	return turnJSON(agent.Turn{Action: agent.KindType, Element: ptr(el), Secret: ptr(name)})
}

func extract(el int, into string) string {
	return turnJSON(agent.Turn{Action: agent.KindExtract, Element: ptr(el), Into: ptr(into)})
}

func finish(el int, claim string) string {
	return turnJSON(agent.Turn{Action: agent.KindFinish, Element: ptr(el), Claim: ptr(claim)})
}

func giveUp(reason string) string {
	return turnJSON(agent.Turn{Action: agent.KindGiveUp, Reason: ptr(reason)})
}

func audit(verdict, reason string) string {
	raw, err := json.Marshal(map[string]string{"verdict": verdict, "reason": reason})
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// reply is a scripted answer charging the default usage.
func reply(turn string) modeltest.Stub { return modeltest.Reply(turn, usage) }

// Apps.

// refreshApp is a dashboard whose Refresh button changes nothing:
//
//	[1] heading "Dashboard"
//	[2] text "Nothing to see"
//	[3] button "Refresh"
func refreshApp() *sim.Flow {
	return sim.NewFlow(base, sim.Screen{Name: "home", Title: "Dashboard", Nodes: []sim.Node{
		{Role: "heading", Name: "Dashboard"},
		{Role: "text", Name: "Nothing to see"},
		{Role: "button", Name: "Refresh"},
	}})
}

// transferApp is a transfer form whose "Submit transfer" button (an
// irreversible control) posts to the ledger and stays on the form:
//
//	[1] heading "Transfer"
//	[2] textbox "Amount"
//	[3] button "Submit transfer"
func transferApp() *sim.Flow {
	f := sim.NewFlow(base, sim.Screen{Name: "form", Title: "Transfer", Nodes: []sim.Node{
		{Role: "heading", Name: "Transfer"},
		{Role: "textbox", Name: "Amount"},
		{Role: "button", Name: "Submit transfer"},
	}})
	f.On("button", "Submit transfer", func(ev *sim.Event) error {
		ev.Append("transfer " + ev.Value("textbox", "Amount"))
		return nil
	})
	return f
}

// lookupApp is a member search and its details page:
//
//	search: [1] heading "Member Search" [2] textbox "Member number" [3] button "Search"
//	details: [1] heading "Member Details" [2] cell "Status" [3] cell "Active"
//	         [4] cell "Savings Balance" [5] cell balance
func lookupApp(balance string) *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "textbox", Name: "Member number"},
			{Role: "button", Name: "Search"},
		}},
		sim.Screen{Name: "details", Title: "Member Details", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Details"},
			{Role: "cell", Name: "Active", Row: "Status"},
			{Role: "cell", Name: balance, Row: "Savings Balance"},
		}},
	)
	f.On("button", "Search", sim.Goto("details"))
	return f
}

// actedOn returns the actions that reached the app after the run's
// opening navigation.
func actedOn(f *sim.Flow) []sim.Handled {
	var out []sim.Handled
	for i, h := range f.Handled() {
		if i == 0 && h.Type == domain.ActNavigate {
			continue
		}
		out = append(out, h)
	}
	return out
}

// snapshotOf loads screen of f through a fresh surface and returns the
// normalised snapshot the agent would see.
func snapshotOf(t *testing.T, f *sim.Flow, screen string) *domain.UiSnapshot {
	t.Helper()
	s := sim.New(f)
	pol, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := pol.Authorize(policy.Request{Action: domain.Action{Type: domain.ActNavigate, URL: f.URL(screen)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dispatch(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	raw, err := s.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return perception.Normalize(raw)
}

// evidenceFiles returns every file under dir with its content.
func evidenceFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = raw
		return nil
	})
	if err != nil {
		t.Fatalf("read evidence: %v", err)
	}
	return out
}
