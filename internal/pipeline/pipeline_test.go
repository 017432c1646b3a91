package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/cassette"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

var update = flag.Bool("update", false, "re-record testdata/lookup.cassette.json with the scripted explorer")

const (
	base    = "http://127.0.0.1/app"
	goal    = "Find the savings balance of member 10042"
	golden  = "testdata/lookup.cassette.json"
	balance = "$1,234.56"
)

// lookupApp is a member search whose Search button opens the details of
// the member (or, broken, a page without them).
func lookupApp(broken bool) *sim.Flow {
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
		sim.Screen{Name: "maintenance", Title: "Maintenance", Nodes: []sim.Node{
			{Role: "heading", Name: "Down for maintenance"},
		}},
	)
	if broken {
		f.On("button", "Search", sim.Goto("maintenance"))
	} else {
		f.On("button", "Search", sim.Goto("details"))
	}
	return f
}

// opener opens a fresh app per session; the flows it made are kept.
type opener struct {
	brokenFrom int // sessions from this one on (1-based) are broken; 0 never
	flows      []*sim.Flow
}

func (o *opener) open(context.Context) (surface.Surface, error) {
	f := lookupApp(o.brokenFrom > 0 && len(o.flows)+1 >= o.brokenFrom)
	o.flows = append(o.flows, f)
	return sim.New(f), nil
}

type testBundle struct {
	ctx            context.Context
	out, data, lib string
	open           *opener
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	dir := t.TempDir()
	return &testBundle{ctx: ctx, out: filepath.Join(dir, "caps"), data: filepath.Join(dir, "data"), lib: filepath.Join(dir, "lib"), open: &opener{}}
}

// params explores with m; run ids are fixed so evidence can be found.
func (b *testBundle) params(m model.Model, eval bool) pipeline.Params {
	return pipeline.Params{
		Agent: agent.Config{Model: m, Goal: goal, BaseURL: base, Redactor: redact.New(), DataDir: b.data, RunID: "discover-1",
			Autonomy: agent.LevelAuto, Budget: agent.Budget{MaxSteps: 12}, VerifyWait: 500 * time.Millisecond},
		Open: b.open.open, Out: b.out, ID: "test.lookup", Version: "1.0.0", ProvenanceID: "cassette-test",
		Eval: eval, NewRunID: func() string { return "eval-1" },
	}
}

var recordOnce sync.Once

// player plays the golden cassette, recording it first under -update.
func player(t *testing.T) model.Model {
	t.Helper()
	if *update {
		recordOnce.Do(func() {
			b := setup(t)
			rec := cassette.Record(explorer{}, golden, nil)
			if _, err := pipeline.Run(b.ctx, b.params(rec, false)); err != nil {
				t.Fatalf("record %s: %v", golden, err)
			}
		})
	}
	p, err := cassette.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := pipeline.Run(b.ctx, b.params(player(t), true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Discovery.Status != agent.StatusFinished {
		t.Fatalf("discovery %s (%s), want finished", res.Discovery.Status, res.Discovery.Reason)
	}
	want := filepath.Join(b.out, "test.lookup@1.0.0.yaml")
	if res.File != want || res.Capability != "test.lookup@1.0.0" {
		t.Errorf("File, Capability = %q, %q; want %q, test.lookup@1.0.0", res.File, res.Capability, want)
	}
	l, err := capability.Load(res.File)
	if err != nil {
		t.Fatalf("the written capability does not load: %v", err)
	}
	if !l.Sealed || l.Hash != res.ContentHash || !strings.HasPrefix(res.ContentHash, "sha256:") {
		t.Errorf("sealed %v, hash %q, result says %q", l.Sealed, l.Hash, res.ContentHash)
	}
	if l.Capability.Provenance == nil || l.Capability.Provenance.RunID != "cassette-test" {
		t.Errorf("provenance %+v, want run id cassette-test", l.Capability.Provenance)
	}
	if res.EvalInputs["member_id"] != "10042" || len(res.EvalInputs) != 1 {
		t.Errorf("EvalInputs = %v, want member_id=10042", res.EvalInputs)
	}
	ev := res.Eval
	if ev == nil || ev.Status != domain.StatusSuccess || fmt.Sprint(ev.Outputs["savings_balance"]) != "1234.56" || ev.ContentHash != res.ContentHash {
		t.Fatalf("eval = %+v, want SUCCESS with savings_balance 1234.56 (the number %s shows) on the sealed hash", ev, balance)
	}
	if code := res.ExitCode(); code != 0 {
		t.Errorf("ExitCode = %d, want 0", code)
	}
	if len(b.open.flows) != 2 {
		t.Errorf("%d sessions opened, want 2 (discovery, eval)", len(b.open.flows))
	}
	if _, err := os.Stat(filepath.Join(b.data, "runs", "eval-1", "record.json")); err != nil {
		t.Errorf("no evidence of the eval run: %v", err)
	}
}

// TestRunEvalFails: the app broke between discovery and eval. The eval's
// failure is a result with its exit code, and the sealed file stays.
func TestRunEvalFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.open.brokenFrom = 2
	res, err := pipeline.Run(b.ctx, b.params(player(t), true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Eval == nil || res.Eval.Status == domain.StatusSuccess || res.Eval.FailureCode == "" {
		t.Fatalf("eval = %+v, want a failure with its code", res.Eval)
	}
	t.Logf("eval %s %s: %s", res.Eval.Status, res.Eval.FailureCode, res.Eval.Message)
	if code := res.ExitCode(); code != res.Eval.ExitCode || code == 0 {
		t.Errorf("ExitCode = %d, want the eval's non-zero %d", code, res.Eval.ExitCode)
	}
	if l, err := capability.Load(res.File); err != nil || !l.Sealed || l.Hash != res.ContentHash {
		t.Errorf("the sealed file after a failed eval: %v", err)
	}
}

func TestRunWithoutEval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := pipeline.Run(b.ctx, b.params(player(t), false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Eval != nil || res.EvalInputs != nil || res.ExitCode() != 0 || len(b.open.flows) != 1 {
		t.Errorf("eval %v, inputs %v, exit %d, %d sessions; want no eval, exit 0, one session", res.Eval, res.EvalInputs, res.ExitCode(), len(b.open.flows))
	}
	if _, err := capability.Load(res.File); err != nil {
		t.Errorf("the written capability does not load: %v", err)
	}
}

// TestRunGivesUp: a discovery that does not finish writes nothing and
// stands for NEEDS_HUMAN's exit code.
func TestRunGivesUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := pipeline.Run(b.ctx, b.params(explorer{giveUp: true}, true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Discovery.Status != agent.StatusGaveUp || res.File != "" || res.Eval != nil || res.ExitCode() != 2 {
		t.Errorf("status %s, file %q, eval %v, exit %d; want gave_up, nothing, exit 2", res.Discovery.Status, res.File, res.Eval, res.ExitCode())
	}
	if _, err := os.Stat(b.out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--out exists after a discovery that gave up: %v", err)
	}
}

func TestRunOpenFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.params(explorer{}, true)
	p.Open = func(context.Context) (surface.Surface, error) { return nil, errors.New("no browser here") }
	if _, err := pipeline.Run(b.ctx, p); err == nil || !strings.Contains(err.Error(), "no browser here") {
		t.Errorf("err = %v, want the opener's", err)
	}
}

// explorer is a scripted model for lookupApp that reads the numbered
// element list: type the member number, search, read the balance, finish.
type explorer struct{ giveUp bool }

var element = regexp.MustCompile(`(?m)^\[(\d+)\] (\S+) "([^"]*)"(.*)$`)

func (e explorer) Decide(_ context.Context, req model.Request) (model.Response, error) {
	turn := map[string]any{"thought": "scripted", "expect": nil}
	for _, k := range []string{"element", "text", "secret", "input", "key", "url", "into", "code", "claim", "reason"} {
		turn[k] = nil
	}
	find := func(role, name string) (int, string) {
		for _, m := range element.FindAllStringSubmatch(req.Observation, -1) {
			if m[2] == role && m[3] == name {
				var n int
				fmt.Sscan(m[1], &n)
				return n, m[4]
			}
		}
		return 0, ""
	}
	history := strings.Join(req.Context, "\n")
	switch box, rest := find("textbox", "Member number"); {
	case req.Purpose == "audit":
		turn = map[string]any{"verdict": "confirmed", "reason": "the details show the balance"}
	case e.giveUp:
		turn["action"], turn["reason"] = agent.KindGiveUp, "scripted to give up"
	case box > 0 && strings.Contains(rest, `value=""`):
		turn["action"], turn["element"], turn["text"], turn["input"] = agent.KindType, box, "10042", "member_id"
	case box > 0:
		n, _ := find("button", "Search")
		turn["action"], turn["element"] = agent.KindClick, n
		turn["expect"] = map[string]any{"kind": "text_appears", "text": "Member Details"}
	case !strings.Contains(history, "into savings_balance"):
		n, _ := find("cell", "Savings Balance")
		turn["action"], turn["element"], turn["into"] = agent.KindExtract, n+1, "savings_balance"
	default:
		n, _ := find("heading", "Member Details")
		turn["action"], turn["element"], turn["claim"] = agent.KindFinish, n, "The savings balance of member 10042 is shown"
	}
	raw, err := json.Marshal(turn)
	return model.Response{Turn: raw, Usage: model.Usage{InputTokens: 100, OutputTokens: 20}, Model: "explorer"}, err
}

func (explorer) ID() string          { return "explorer" }
func (explorer) RequiresFrame() bool { return false }

// TestReplay replays the capability a pipeline run wrote: a bad input is
// a FAILED record that opens no surface; a good one runs on a fresh one.
func TestReplay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := pipeline.Run(b.ctx, b.params(player(t), false))
	if err != nil || res.File == "" {
		t.Fatalf("pipeline run: %v, file %q", err, res.File)
	}
	l, err := capability.Load(res.File)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		inputs     map[string]string
		wantStatus domain.RunStatus
		wantCode   domain.FailureCode
		wantOpened int
	}{
		// The pipeline run opened one session; a bad input opens none.
		// The pipeline run above opened one session; a bad input opens none.
		{name: "missing input", inputs: map[string]string{}, wantStatus: domain.StatusFailed, wantCode: domain.CodeInputInvalid, wantOpened: 1},
		{name: "lookup", inputs: map[string]string{"member_id": "20077"}, wantStatus: domain.StatusSuccess, wantOpened: 2},
	}
	for _, tt := range tests {
		rec, err := pipeline.Replay(b.ctx, pipeline.ReplayParams{LibraryDir: b.out, Open: b.open.open, Run: replay.Options{
			Capability: l, Inputs: tt.inputs, BaseURL: base, DataDir: b.data, RunID: "replay-" + strings.ReplaceAll(tt.name, " ", "-")}})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rec.Status != tt.wantStatus || rec.FailureCode != tt.wantCode || len(b.open.flows) != tt.wantOpened {
			t.Errorf("%s: %s %s (%s) after %d sessions, want %s %s after %d", tt.name, rec.Status, rec.FailureCode, rec.Message,
				len(b.open.flows), tt.wantStatus, tt.wantCode, tt.wantOpened)
		}
	}
}
