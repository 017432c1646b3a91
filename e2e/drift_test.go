package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// driftCase is one drift variant to replay.
type driftCase struct {
	kind, change string
	seed         int64
}

// reducedDrift is the drift run of `make test`: a spread of the bench's
// drift variants (bench/cmd/benchrun/drift.go runs them all) chosen to
// halt fast: seeded benign mixes, every named benign change, and semantic
// changes of every family whose halt does not wait out a 10 s
// postcondition. Semantic seeds are the bench's (index in DriftChanges + 1).
func reducedDrift() []driftCase {
	var out []driftCase
	for seed := range int64(5) {
		out = append(out, driftCase{kind: mockapp.DriftBenign, seed: seed + 1})
	}
	for i, ch := range mockapp.DriftBenignChanges {
		out = append(out, driftCase{kind: mockapp.DriftBenign, change: ch, seed: int64(i + 1)})
	}
	for _, ch := range []string{
		"currency_near_value", "currency_header",
		"duplicate_savings_row", "duplicate_search_button",
		"moved_value_swapped", "moved_value_blank",
		"rename_savings_label", "remove_status_row",
	} {
		out = append(out, driftCase{kind: mockapp.DriftSemantic, change: ch, seed: int64(slices.Index(mockapp.DriftChanges, ch) + 1)})
	}
	return out
}

// TestDriftReduced replays the reference lookup on about 15 drift variants
// in one Chromium session and fails on any silent wrong result: wrong
// outputs on a benign variant, any answer on a semantic one, any decoy
// hit. A benign variant that halts (a false halt) and a semantic one that
// halts with another code are logged, not failed.
func TestDriftReduced(t *testing.T) {
	b := setup(t, mockapp.Options{})
	lookup := load(t, "memberdesk.savings_balance")
	// One context for the whole walk (about 16 runs, the halting ones each
	// waiting out a short step wait): only a hang meets 10 minutes.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	sess, err := sharedBrowser.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	seq := 0
	// A drifted run's verdict cannot fail the test by being slow (a benign
	// variant that halts is only logged), so its step wait stays short; the
	// undrifted sign-on must succeed, so it gets a generous one, which a
	// passing run never waits out.
	run := func(stepWait time.Duration) *domain.RunRecord {
		t.Helper()
		seq++
		rec, err := replay.Run(ctx, replay.Options{
			Capability: lookup, Library: b.lib, Inputs: map[string]string{"member_id": "12345"},
			BaseURL: b.app.URL(), Surface: sess, Redactor: redact.New(), DataDir: b.dataDir,
			Secrets:  secrets{"corebank_operator": operator, "corebank_password": password},
			RunID:    fmt.Sprintf("drift-%03d", seq),
			StepWait: stepWait,
		})
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		return rec
	}
	// Sign on once, undrifted.
	if rec := run(60 * time.Second); rec.Status != domain.StatusSuccess {
		t.Fatalf("undrifted lookup: %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	}
	start := time.Now()
	counts := map[string]int{}
	cases := reducedDrift()
	for _, v := range cases {
		req := mockapp.DriftSpec{Kind: v.kind, Seed: v.seed, Change: v.change}
		if _, err := b.ctl.SetDrift(ctx, req); err != nil {
			t.Fatal(err)
		}
		before, err := b.ctl.Drift(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if before.Drift == nil {
			t.Fatalf("drift %+v was not set", req)
		}
		name := before.Drift.String()
		t0 := time.Now()
		rec := run(1500 * time.Millisecond)
		after, err := b.ctl.Drift(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.ctl.SetDrift(ctx, mockapp.DriftSpec{Kind: mockapp.DriftOff}); err != nil {
			t.Fatal(err)
		}
		outs := map[string]string{}
		for k, val := range rec.Outputs {
			outs[k] = fmt.Sprint(val)
		}
		verdict := mockapp.JudgeDrift(mockapp.DriftRun{
			Kind: v.kind, Change: v.change, Status: string(rec.Status), FailureCode: string(rec.FailureCode),
			Outputs: outs, DecoyHits: after.DecoyHits,
		})
		counts[verdict]++
		line := fmt.Sprintf("%-34s %-17s %s %s outputs=%v decoy_hits=%d (%.1fs)", name, verdict, rec.Status, rec.FailureCode, outs, after.DecoyHits, time.Since(t0).Seconds())
		switch verdict {
		case mockapp.VerdictSilentWrong:
			t.Errorf("SILENT WRONG %s; expected %s; message: %s", line, mockapp.DriftExpected(v.kind, v.change), rec.Message)
		case mockapp.VerdictFalseHalt:
			t.Logf("false halt   %s: %s", line, rec.Message)
		case mockapp.VerdictHaltedOtherCode:
			t.Logf("other code   %s; expected %s", line, mockapp.DriftExpected(v.kind, v.change))
		default:
			t.Logf("ok           %s", line)
		}
	}
	t.Logf("%d variants in %.1fs: ok %d, false halts %d, halted with another code %d, silent wrong %d",
		len(cases), time.Since(start).Seconds(), counts[mockapp.VerdictOK], counts[mockapp.VerdictFalseHalt],
		counts[mockapp.VerdictHaltedOtherCode], counts[mockapp.VerdictSilentWrong])
}
