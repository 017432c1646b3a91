package agent_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/surface/sim"
)

const (
	stuckHint    = "Notice: you have chosen this exact action three times and the screen did not change"
	stuckRefusal = "Notice: this exact action was already tried three times with no effect; it is refused"
)

// TestSameClickForever: a model that clicks a button that changes nothing,
// forever, gets a hint after the third click, has the fourth and fifth
// refused (they never reach the app), and the sixth ends the run as stuck.
func TestSameClickForever(t *testing.T) {
	t.Parallel()
	b := setup(t, reply(click(3)).Always())
	f := refreshApp()
	res := b.run(t, b.config(sim.New(f), "Refresh the dashboard"))

	if res.Status != agent.StatusStuck || res.Reason != "the same click was chosen 6 times without progress" {
		t.Errorf("Status, Reason = %s, %q; want stuck after 6", res.Status, res.Reason)
	}
	if res.Steps != 6 || b.requests() != 6 {
		t.Errorf("Steps = %d, requests = %d; want 6 of each", res.Steps, b.requests())
	}
	if want := 6 * usage.Total(); res.Tokens != want {
		t.Errorf("Tokens = %d, want %d", res.Tokens, want)
	}
	if n := f.Count("button", "Refresh"); n != 3 {
		t.Errorf("the app received %d clicks, want exactly 3", n)
	}
	v := b.progress.verdicts()
	if len(v) != 6 || slices.Contains(v[:3], "refused") || v[3] != "refused" || v[4] != "refused" || v[5] != "stuck" {
		t.Errorf("verdicts = %q, want three performed, refused, refused, stuck", v)
	}
	for i := range 6 {
		txt := b.userText(t, i)
		if hint := strings.Contains(txt, stuckHint); hint != (i == 3) {
			t.Errorf("request %d carries the hint: %v, want %v (only right after the third click)", i+1, hint, i == 3)
		}
		if refusal := strings.Contains(txt, stuckRefusal); refusal != (i == 4 || i == 5) {
			t.Errorf("request %d carries the refusal: %v, want %v", i+1, refusal, i == 4 || i == 5)
		}
	}
	// The history tells the model what happened to each click.
	if txt := b.userText(t, 5); !strings.Contains(txt, `5. click button "Refresh" → refused`) {
		t.Errorf("the sixth request's history lacks the refused fifth click:\n%s", txt)
	}
}

// stateSurface is a sim surface over an application that exposes its own
// state: the agent judges progress by ProgressKey, a StableProgressKey of
// that state, instead of the screen. The state never reaches a prompt.
type stateSurface struct {
	*sim.Surface
	state func() any
	keys  atomic.Int64
	slow  atomic.Int64 // nanoseconds of the slowest ProgressKey
}

func (s *stateSurface) ProgressKey() string {
	start := time.Now()
	k := perception.StableProgressKey(s.state())
	if d := time.Since(start).Nanoseconds(); d > s.slow.Load() {
		s.slow.Store(d)
	}
	s.keys.Add(1)
	return k
}

// blobMark is in every string of the blob, so a leak of any part shows.
const blobMark = "BLOB-7c1d"

// hugeBlob returns a hostile application state: a 5 MB string, an object
// nested 10,000 levels deep, a DAG of six levels whose every level holds
// one shared child 64 times (64^6 paths), a cycle, and 10,000 keys in one object.
func hugeBlob() map[string]any {
	deep := map[string]any{"leaf": blobMark}
	for i := range 10_000 {
		deep = map[string]any{fmt.Sprintf("level%d", i): deep}
	}
	dag := map[string]any{"leaf": blobMark + strings.Repeat("d", 1000)}
	for range 6 {
		next := map[string]any{}
		for k := range 64 {
			next[fmt.Sprintf("k%02d", k)] = dag
		}
		dag = next
	}
	cyc := map[string]any{"name": blobMark}
	cyc["self"] = cyc
	wide := make(map[string]any, 10_000)
	for i := range 10_000 {
		wide[fmt.Sprintf("%s-%06d", blobMark, i)] = i
	}
	return map[string]any{
		"big":  blobMark + strings.Repeat("x", 5<<20),
		"dag":  dag,
		"deep": deep,
		"cyc":  cyc,
		"wide": wide,
	}
}

// TestHugeStateBlob: a surface whose application state is a huge, deep,
// shared, cyclic blob still gets a bounded, fast progress key; the run
// ends in the documented way well within its budget, every request stays
// small, and no part of the blob reaches the prompt. A static state makes
// the same click stuck; a state that moves with every click is progress,
// so only the step budget ends the run.
func TestHugeStateBlob(t *testing.T) {
	t.Parallel()
	blob := hugeBlob()
	tests := []struct {
		name   string
		moves  bool // the state counts the clicks
		status agent.Status
		clicks int
	}{
		{"StaticStateIsStuck", false, agent.StatusStuck, 3},
		{"MovingStateIsProgress", true, agent.StatusBudgetExceeded, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(click(3)).Always())
			f := refreshApp()
			s := &stateSurface{Surface: sim.New(f)}
			s.state = func() any {
				st := map[string]any{"blob": blob}
				if tc.moves {
					// Sorted first, so it is inside the key's output cap.
					st["a_clicks"] = f.Count("button", "Refresh")
				}
				return st
			}
			cfg := b.config(s, "Refresh the dashboard")
			cfg.Budget.MaxSteps = 8
			res := b.run(t, cfg)

			if res.Status != tc.status {
				t.Errorf("Status = %s (%q), want %s", res.Status, res.Reason, tc.status)
			}
			if n := f.Count("button", "Refresh"); n != tc.clicks {
				t.Errorf("the app received %d clicks, want %d", n, tc.clicks)
			}
			if s.keys.Load() == 0 {
				t.Fatal("the agent never asked the surface for its progress key")
			}
			slow := time.Duration(s.slow.Load())
			t.Logf("slowest progress key: %s", slow)
			// About 0.3 s under -race here; an uncapped walk of the DAG's
			// 64^6 paths would take hours, so 10 s still tells a capped key
			// from an uncapped one on a loaded CI machine.
			if slow > 10*time.Second {
				t.Errorf("the slowest progress key took %s; it must be bounded by its caps, not the input", slow)
			}
			if k := s.ProgressKey(); len(k) > perception.ProgressMaxOutput {
				t.Errorf("progress key is %d bytes, want at most %d", len(k), perception.ProgressMaxOutput)
			}
			for i, r := range b.srv.Requests() {
				if len(r.Body) > 32<<10 {
					t.Errorf("request %d is %d bytes, want a bounded prompt (under 32 KiB)", i+1, len(r.Body))
				}
				if bytes.Contains(r.Body, []byte(blobMark)) {
					t.Errorf("request %d carries part of the application state", i+1)
				}
			}
		})
	}
}

// TestHugeScreen: a screen with a thousand controls and a 16 KiB
// name is rendered into a bounded observation: the list is capped, every
// text is cut, and the run still ends within its budget.
func TestHugeScreen(t *testing.T) {
	t.Parallel()
	nodes := []sim.Node{
		{Role: "heading", Name: "Ledger " + strings.Repeat("L", 16<<10)},
		{Role: "text", Name: blobMark + strings.Repeat("t", 16<<10)},
	}
	for i := range 1000 {
		nodes = append(nodes, sim.Node{Role: "button", Name: fmt.Sprintf("Entry %04d", i)})
	}
	f := sim.NewFlow(base, sim.Screen{Name: "ledger", Title: "Ledger", Nodes: nodes})
	b := setup(t, reply(click(3)), reply(giveUp("too much to read")))
	res := b.run(t, b.config(sim.New(f), "Open the first ledger entry"))

	if res.Status != agent.StatusGaveUp {
		t.Errorf("Status = %s (%q), want gave_up", res.Status, res.Reason)
	}
	if n := f.Count("button", "Entry 0000"); n != 1 {
		t.Errorf("Entry 0000 clicked %d times, want 1 (element [3])", n)
	}
	for i, r := range b.srv.Requests() {
		if len(r.Body) > 64<<10 {
			t.Errorf("request %d is %d bytes, want the observation capped (under 64 KiB)", i+1, len(r.Body))
		}
	}
	obs := b.userText(t, 0)
	if !strings.Contains(obs, "more elements omitted") {
		t.Errorf("the observation does not say it was cut:\n%.400s", obs)
	}
	if strings.Contains(obs, strings.Repeat("L", 200)) {
		t.Error("the 16 KiB heading reached the prompt uncut")
	}
}
