package replay_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// flakyRecovery is a wait remedy for the checklist's "Connection lost"
// banner.
const flakyRecovery = `recovery:
  - id: connection_lost
    when: {text_present: Connection lost}
    remedy: wait
    max_attempts: 2
    backoff: {initial_ms: 1800, factor: 1, max_ms: 1800}
`

// TestForEachRemedyNeverRepeatsAnIteration (issue 24 item 3, invariant
// 12 per iteration): a remedy in the second iteration re-anchors after
// that iteration's elevated tick, never at the first iteration's tick,
// although every iteration acts on the same page: the server sees each
// item ticked once. The same capability with the tick declared safe
// re-anchors at the first iteration and ticks Alpha again (unticking
// it), which is what the per-iteration rule prevents.
func TestForEachRemedyNeverRepeatsAnIteration(t *testing.T) {
	page := &checklistPage{banner: true}
	w := newPageWorld(t, page.serve)
	run := func(t *testing.T, yaml string) *domain.RunRecord {
		t.Helper()
		l, err := capability.Parse("tick.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := w.br.NewSession(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sess.Close() }()
		rec, err := replay.Run(t.Context(), replay.Options{Capability: l, BaseURL: w.url, Surface: sess,
			Inputs: map[string]string{"items": `["Alpha","Gamma"]`}, Redactor: redact.New(), RunID: "loop-remedy",
			DataDir: t.TempDir(), StepWait: 3 * time.Second})
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		return rec
	}
	elevated := strings.Replace(tickByName, "policy:\n", flakyRecovery+"policy:\n", 1)
	page.set("Alpha", "Beta", "Gamma")
	rec := run(t, elevated)
	if rec.Status != domain.StatusSuccess || rec.RecoveryAttempts != 1 {
		t.Fatalf("%s (%s: %s), %d recovery attempts; want SUCCESS after one wait remedy", rec.Status, rec.FailureCode, rec.Message, rec.RecoveryAttempts)
	}
	if got := page.ticked(); !slices.Equal(got, []string{"Alpha", "Gamma"}) {
		t.Errorf("server saw ticks %q, want each item once", got)
	}
	safe := strings.Replace(elevated, "          risk: elevated\n", "", 1)
	safe = strings.Replace(safe, "risk: elevated\n", "risk: safe\n", 1)
	page.set("Alpha", "Beta", "Gamma")
	rec = run(t, safe)
	if rec.RecoveryAttempts == 0 {
		t.Fatalf("safe tick: no remedy ran (%s %s): the banner was missed, the contrast proves nothing", rec.Status, rec.Message)
	}
	if got := page.ticked(); len(got) < 3 || got[2] != "Alpha" {
		t.Errorf("safe tick: server saw %q (%s %s); want Alpha ticked again after the remedy, the contrast this test rests on", got, rec.Status, rec.Message)
	}
}
