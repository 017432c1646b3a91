package replay_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// transferAt replays the approved, released reference transfer
// (memberdesk.transfer_funds@1.3.0) on w at an evidence level ("" the
// capability's) and returns its record and bundle directory.
func transferAt(t *testing.T, w *warmWorld, level domain.EvidenceLevel, id string) (*domain.RunRecord, string) {
	t.Helper()
	l, err := capability.Load(filepath.Join(examplesDir, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Capability.Ref() != "memberdesk.transfer_funds@1.3.0" {
		t.Fatalf("the reference transfer is %s", l.Capability.Ref())
	}
	rec, err := replay.Run(t.Context(), replay.Options{
		Capability: l, Library: w.lib, BaseURL: w.app.URL(), Surface: w.sess, Secrets: memberDeskSecrets{}, Redactor: redact.New(),
		Inputs:  map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
		DataDir: w.dir, RunID: id, AllowIrreversible: true, ReleasedGates: []string{"submit"}, EvidenceLevel: level,
		Approval: &policy.Approval{Capability: l.Capability.Ref(), ContentHash: l.Hash, Approver: "reviewer"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec, filepath.Join(w.dir, "runs", id)
}

// kept lists a bundle's screenshot_kept events as "step reason" and its
// step_finished screenshots by step.
func kept(t *testing.T, dir string) ([]string, map[string]string) {
	t.Helper()
	var out []string
	shots := map[string]string{}
	for _, e := range readEvents(t, dir) {
		switch e.Type {
		case "screenshot_kept":
			out = append(out, e.StepID+" "+e.Data["reason"].(string))
		case "step_finished":
			if s, _ := e.Data["screenshot"].(string); s != "" {
				shots[e.StepID] = s
			}
			if d, _ := e.Data["observation_sha256"].(string); len(d) != 64 {
				t.Errorf("step %s recorded no observation digest: %v", e.StepID, e.Data)
			}
		}
	}
	slices.Sort(out)
	return out, shots
}

// pngs counts the files under a bundle's screenshots/.
func pngs(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, evidence.ScreenshotDir, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// TestDecisiveTransferKeepsOnlyDecisiveScreens: the reference transfer at
// its default evidence (decisive) on real Chromium and MemberDesk holds
// exactly the screen its submit was authorized on, the screens after the
// submit and the confirm, the screen its confirmation was read from and
// its final screen, each with its reason, and nothing else; every step
// recorded its observation's digest; the bundle verifies. At full it
// holds today's bundle: a screenshot after every step as well.
func TestDecisiveTransferKeepsOnlyDecisiveScreens(t *testing.T) {
	w := newWarmWorld(t)
	rec, dir := transferAt(t, w, "", "decisive")
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("transfer %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	}
	validateEventLog(t, dir)
	got, shots := kept(t, dir)
	want := []string{" final", "confirm after_elevated", "read_confirmation output", "submit after_elevated", "submit before_elevated"}
	if !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if n := pngs(t, dir); n != len(want) {
		t.Errorf("%d screenshots, want %d", n, len(want))
	}
	if steps := slices.Sorted(maps.Keys(shots)); !slices.Equal(steps, []string{"confirm", "read_confirmation"}) {
		t.Errorf("steps with a screenshot %q, want confirm and read_confirmation", steps)
	}
	rep := evidence.Verify(dir, []string{"OP1001", "teller-pass-1"})
	if !rep.ShareReady || rep.Evidence == nil || rep.Evidence.Screenshots != 5 || rep.Evidence.Unexplained != 0 ||
		rep.Evidence.Level != "decisive" || rep.Evidence.ObservationDigests != len(rec.Steps) {
		t.Fatalf("verify: %v %+v (%d steps)", rep.Reasons, rep.Evidence, len(rec.Steps))
	}
	t.Logf("decisive: %s", rep.Evidence)

	full, fdir := transferAt(t, w, domain.EvidenceFull, "full")
	if full.Status != domain.StatusSuccess {
		t.Fatalf("full transfer %s %s: %s", full.Status, full.FailureCode, full.Message)
	}
	_, fshots := kept(t, fdir)
	for _, st := range full.Steps {
		// Every step result but the submit, whose screen after is its
		// step-NNN-after.png (a confirm dialog cannot be painted), is
		// pictured, as before evidence levels.
		if st.ID != "submit" && fshots[st.ID] == "" {
			t.Errorf("full: step %s has no screenshot", st.ID)
		}
	}
	frep := evidence.Verify(fdir, nil)
	if !frep.ShareReady || frep.Evidence.Level != "full" || frep.Evidence.Reasons[evidence.ReasonFull] == 0 || frep.Evidence.Reasons[evidence.ReasonFinal] != 0 {
		t.Fatalf("verify full: %v %+v", frep.Reasons, frep.Evidence)
	}
	t.Logf("full: %s", frep.Evidence)
}

// TestEvidenceNone: none is refused for the transfer before anything is
// sent (run_refused names the evidence check and the message the flag);
// the read-only lookup at none keeps no screenshot on SUCCESS and still
// records every step's observation digest.
func TestEvidenceNone(t *testing.T) {
	w := newWarmWorld(t)
	rec, dir := transferAt(t, w, domain.EvidenceNone, "none-transfer")
	if rec.Status != domain.StatusFailed || rec.DispatchCount != 0 || !containsAll(rec.Message, "--evidence-level none", "not read-only") {
		t.Fatalf("transfer at none: %s %s %q (%d dispatches)", rec.Status, rec.FailureCode, rec.Message, rec.DispatchCount)
	}
	refused := false
	for _, e := range readEvents(t, dir) {
		refused = refused || (e.Type == "run_refused" && e.Data["check"] == evidence.CheckEvidence)
	}
	if !refused || pngs(t, dir) != 0 {
		t.Errorf("refused by the evidence check: %v; %d screenshots", refused, pngs(t, dir))
	}

	l, err := capability.Load(filepath.Join(examplesDir, "memberdesk.savings_balance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	look, err := replay.Run(t.Context(), replay.Options{Capability: l, Library: w.lib, Inputs: member2("12345"), BaseURL: w.app.URL(),
		Surface: w.sess, Secrets: memberDeskSecrets{}, Redactor: redact.New(), DataDir: w.dir, RunID: "none-lookup", EvidenceLevel: domain.EvidenceNone})
	if err != nil {
		t.Fatal(err)
	}
	ldir := filepath.Join(w.dir, "runs", "none-lookup")
	if look.Status != domain.StatusSuccess {
		t.Fatalf("lookup at none: %s %s", look.Status, look.Message)
	}
	if _, err := os.Stat(filepath.Join(ldir, evidence.ScreenshotDir)); !errors.Is(err, os.ErrNotExist) || pngs(t, ldir) != 0 {
		t.Errorf("lookup at none kept %d screenshots", pngs(t, ldir))
	}
	rep := evidence.Verify(ldir, nil)
	if !rep.ShareReady || rep.Evidence.Screenshots != 0 || rep.Evidence.ObservationDigests != len(look.Steps) || rep.Evidence.Level != "none" {
		t.Errorf("verify lookup at none: %v %+v", rep.Reasons, rep.Evidence)
	}
}

// TestLookupTimeByEvidenceLevel logs (asserts nothing of) the warm
// lookup's wall time at decisive and full on the same session, for the
// record: the screenshots decisive does not take are the difference.
func TestLookupTimeByEvidenceLevel(t *testing.T) {
	w := newWarmWorld(t)
	l, err := capability.Load(filepath.Join(examplesDir, "memberdesk.savings_balance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 5
	times := map[domain.EvidenceLevel][]time.Duration{}
	for i := range rounds * 2 {
		level := []domain.EvidenceLevel{domain.EvidenceDecisive, domain.EvidenceFull}[i%2]
		start := time.Now()
		rec, err := replay.Run(t.Context(), replay.Options{Capability: l, Library: w.lib, Inputs: member2("12345"), BaseURL: w.app.URL(),
			Surface: w.sess, Secrets: memberDeskSecrets{}, Redactor: redact.New(), DataDir: w.dir, RunID: "time-" + string(level) + "-" + string(rune('a'+i)),
			EvidenceLevel: level, Warm: i > 0})
		if err != nil || rec.Status != domain.StatusSuccess {
			t.Fatalf("lookup %d at %s: %v %v", i, level, err, rec)
		}
		if i >= 2 { // the first round signs on
			times[level] = append(times[level], time.Since(start))
		}
	}
	for _, level := range []domain.EvidenceLevel{domain.EvidenceDecisive, domain.EvidenceFull} {
		ds := times[level]
		slices.Sort(ds)
		t.Logf("warm lookup at %s: median %v of %v", level, ds[len(ds)/2], ds)
	}
}

// containsAll reports whether s holds every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
