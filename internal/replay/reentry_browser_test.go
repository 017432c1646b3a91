package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

const examplesDir = "../../examples/capabilities"

// memberDeskSecrets signs on to MemberDesk.
type memberDeskSecrets struct{}

func (memberDeskSecrets) Secret(ref string) (string, error) {
	switch ref {
	case "corebank_operator":
		return mockapp.DefaultOperator, nil
	case "corebank_password":
		return mockapp.DefaultPassword, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

// warmWorld is one Chromium session on one MemberDesk, kept across runs
// as a worker keeps a warm session.
type warmWorld struct {
	app  *mockapp.Server
	lib  *replay.DirLibrary
	sess *browser.Session
	dir  string
	n    int
}

func newWarmWorld(t *testing.T) *warmWorld {
	t.Helper()
	// The browser and the session live as long as their contexts: until
	// the cleanups close them.
	ctx := context.Background()
	br, err := browser.Launch(ctx, browser.Options{})
	if err != nil {
		t.Fatalf("launch Chromium: %v", err)
	}
	t.Cleanup(func() { _ = br.Close() })
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	lib, err := replay.LoadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := br.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return &warmWorld{app: app, lib: lib, sess: sess, dir: t.TempDir()}
}

// run replays c for member on the session and returns its record, the
// time it took, and whether it reentered.
func (w *warmWorld) run(t *testing.T, c *capability.Loaded, member string, warm bool) (*domain.RunRecord, time.Duration, bool) {
	t.Helper()
	w.n++
	id := fmt.Sprintf("warm-%d", w.n)
	start := time.Now()
	rec, err := replay.Run(t.Context(), replay.Options{
		Capability: c, Library: w.lib, Inputs: member2(member), BaseURL: w.app.URL(), Surface: w.sess,
		Secrets: memberDeskSecrets{}, Redactor: redact.New(), DataDir: w.dir, RunID: id, Warm: warm,
	})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	validateEventLog(t, filepath.Join(w.dir, "runs", id))
	events := readEvents(t, filepath.Join(w.dir, "runs", id))
	reentered := slices.ContainsFunc(events, func(e event) bool { return e.Type == "reentered" && e.StepID == "open_search" })
	t.Logf("%s member %s warm=%v reentered=%v: %s %v, %d dispatches, %s", id, member, warm, reentered, rec.Status, rec.Outputs, rec.DispatchCount, took.Round(time.Millisecond))
	return rec, took, reentered
}

// timedRuns is how many lookups timed measures.
const timedRuns = 7

// timed runs timedRuns warm lookups of c without evidence, alternating two
// members, checks each answer, and returns the median time and the
// dispatches of the last run.
func (w *warmWorld) timed(t *testing.T, c *capability.Loaded) (time.Duration, int) {
	t.Helper()
	want := map[string]string{"12345": "1234.56", "23456": "0.00"}
	var times []time.Duration
	dispatches := 0
	for i := range timedRuns {
		m := []string{"12345", "23456"}[i%2]
		start := time.Now()
		rec, err := replay.Run(t.Context(), replay.Options{
			Capability: c, Library: w.lib, Inputs: member2(m), BaseURL: w.app.URL(), Surface: w.sess,
			Secrets: memberDeskSecrets{}, Redactor: redact.New(), RunID: fmt.Sprintf("timed-%d", i), Warm: true,
		})
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rec.Outputs["savings_balance"]); rec.Status != domain.StatusSuccess || got != want[m] {
			t.Errorf("%s for %s: %s (%s) balance %s, want %s", c.Capability.ID, m, rec.Status, rec.Message, got, want[m])
		}
		dispatches = rec.DispatchCount
	}
	slices.Sort(times)
	return times[len(times)/2], dispatches
}

func member2(id string) map[string]string { return map[string]string{"member_id": id} }

func (w *warmWorld) arm(t *testing.T, fault string) {
	t.Helper()
	body := strings.NewReader(fmt.Sprintf(`{"fault":%q,"count":1}`, fault))
	resp, err := http.Post(w.app.URL()+"/_control/arm", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("arm %s: %s", fault, resp.Status)
	}
}

// loadQuick loads the example with edits (old, new pairs) sealed again.
func loadQuick(t *testing.T, edits ...string) *capability.Loaded {
	t.Helper()
	path := filepath.Join(examplesDir, "memberdesk.savings_balance_quick.yaml")
	if len(edits) == 0 {
		l, err := capability.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("no %q to edit", edits[i])
		}
		text = strings.ReplaceAll(text, edits[i], edits[i+1])
	}
	text = text[:strings.LastIndex(text, "content_hash:")]
	cp := filepath.Join(t.TempDir(), "quick.yaml")
	if err := os.WriteFile(cp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(cp); err != nil {
		t.Fatal(err)
	}
	l, err := capability.Load(cp)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func wantBalance(t *testing.T, rec *domain.RunRecord, balance, status string) {
	t.Helper()
	if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["savings_balance"]) != balance || fmt.Sprint(rec.Outputs["status"]) != status {
		t.Errorf("%s (%s) %v, want SUCCESS with savings_balance %s, status %s", rec.Status, rec.Message, rec.Outputs, balance, status)
	}
}

// TestReentryOnChromium: on one real Chromium session against MemberDesk,
// a cold run of memberdesk.savings_balance_quick signs on and looks up
// 12345; a warm run on the same session reenters at open_search, makes
// fewer dispatches and returns 23456's balance (the identity check on the
// member number proves it). When the reentered search first shows the
// previous member (the stale_result fault), the run waits for the member
// asked for and never returns the old balance; with a wait shorter than
// the stale screen lasts, it fails closed with no output.
func TestReentryOnChromium(t *testing.T) {
	w := newWarmWorld(t)
	quick := loadQuick(t)

	cold, coldTook, reentered := w.run(t, quick, "12345", false)
	wantBalance(t, cold, "1234.56", "Active")
	if reentered {
		t.Error("a cold run reentered")
	}
	warm, warmTook, reentered := w.run(t, quick, "23456", true)
	wantBalance(t, warm, "0.00", "Closed")
	if !reentered {
		t.Error("the warm run did not reenter")
	}
	if warm.DispatchCount >= cold.DispatchCount {
		t.Errorf("warm run made %d dispatches, the cold one %d", warm.DispatchCount, cold.DispatchCount)
	}
	t.Logf("run 1 (cold, signs on) %s, %d dispatches; run 2 (warm, reentered) %s, %d dispatches",
		coldTook.Round(time.Millisecond), cold.DispatchCount, warmTook.Round(time.Millisecond), warm.DispatchCount)
	// The time per lookup on the warm, signed-on session (reported, not
	// asserted): the reference lookup from its entrypoint, then the quick
	// one reentering; no evidence is written, as in a batch's hot loop.
	ref, err := capability.Load(filepath.Join(examplesDir, "memberdesk.savings_balance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	refMedian, refDispatches := w.timed(t, ref)
	quickMedian, quickDispatches := w.timed(t, quick)
	t.Logf("warm session, median of %d lookups: from the entrypoint %s (%d dispatches), reentering %s (%d dispatches)",
		timedRuns, refMedian.Round(time.Millisecond), refDispatches, quickMedian.Round(time.Millisecond), quickDispatches)

	// The last run viewed 12345: the stale record shows 12345 first.
	w.arm(t, mockapp.FaultStaleResult)
	stale, staleTook, reentered := w.run(t, quick, "23456", true)
	wantBalance(t, stale, "0.00", "Closed")
	if !reentered {
		t.Error("the stale-screen run did not reenter")
	}
	if staleTook < time.Second {
		t.Errorf("the stale-screen run took %s: it cannot have waited out the stale record", staleTook)
	}

	short := loadQuick(t, "    wait: {timeout_ms: 10000}\n  - id: read_status", "    wait: {timeout_ms: 400}\n  - id: read_status")
	w.arm(t, mockapp.FaultStaleResult)
	failed, _, reentered := w.run(t, short, "12345", true)
	if !reentered {
		t.Error("the short-wait run did not reenter")
	}
	if failed.Status == domain.StatusSuccess || len(failed.Outputs) > 0 || failed.FailureCode != domain.CodeUnexpectedState {
		t.Errorf("a search that still shows the previous member ended %s/%s with outputs %v; want it failed closed (UNEXPECTED_STATE), no output",
			failed.Status, failed.FailureCode, failed.Outputs)
	}
}
