package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/heal"
	"github.com/cuahq/cua/internal/mockapp"
)

// healWorld is one MemberDesk and one data dir (SQLite at <data-dir>/cua.db)
// shared by the steps of TestHealRenamedLabel.
type healWorld struct {
	*bundle
	env []string
}

// Seeds of rename_search_button that rename "Search" to "Look up" and to
// "Go" (the drift picks the new label from the seed).
const (
	renameLookUp = 3
	renameGo     = 9
)

func newHealWorld(t *testing.T) *healWorld {
	b := setup(t, mockapp.Options{})
	w := &healWorld{bundle: b, env: []string{"CUA_DATA_DIR=" + b.dataDir,
		"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}}
	files := []string{filepath.Join(examples, "corebank.auth.sign_on.yaml"), filepath.Join(examples, lookup+".yaml")}
	if r := runBin(t, w.env, append([]string{"catalog", "add"}, files...)...); r.code != 0 {
		t.Fatalf("catalog add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return w
}

// drift renames the search button (seed picks the label) and checks it.
func (w *healWorld) drift(t *testing.T, change string, seed int64, want string) {
	t.Helper()
	st, err := w.ctl.SetDrift(t.Context(), mockapp.DriftSpec{Kind: mockapp.DriftSemantic, Change: change, Seed: seed})
	if err != nil || st.Drift == nil || (want != "" && st.Drift.Detail != want) {
		t.Fatalf("drift %s seed %d: %v %+v, want %q", change, seed, err, st.Drift, want)
	}
}

// lookup replays ref for member 12345 and returns the exit code, the
// record and stderr.
func (w *healWorld) lookup(t *testing.T, ref string) (int, *domain.RunRecord, string) {
	t.Helper()
	r := runBin(t, w.env, "replay", ref, "--json", "--base-url", w.app.URL(), "-i", "member_id=12345")
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("replay %s: exit %d, no record: %v\nstdout: %s\nstderr: %s", ref, r.code, err, r.stdout, r.stderr)
	}
	return r.code, &rec, r.stderr
}

// proposals lists the world's proposals through cua heal list --json.
func (w *healWorld) proposals(t *testing.T) []heal.Proposal {
	t.Helper()
	r := runBin(t, w.env, "heal", "list", "--json")
	var out struct{ Proposals []heal.Proposal }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("heal list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return out.Proposals
}

// halted asserts a halted TARGET_NOT_FOUND run of version and returns its
// one new proposal, whose diff changes only the search step's name to name.
func (w *healWorld) halted(t *testing.T, version, name string, before int) heal.Proposal {
	t.Helper()
	code, rec, _ := w.lookup(t, lookup+"@active")
	if code != 2 || rec.Status != domain.StatusNeedsHuman || rec.FailureCode != domain.CodeTargetNotFound || rec.Capability != lookup+"@"+version {
		t.Fatalf("exit %d %s %s on %s, want exit 2 NEEDS_HUMAN TARGET_NOT_FOUND on %s", code, rec.Status, rec.FailureCode, rec.Capability, version)
	}
	ps := w.proposals(t)
	if len(ps) != before+1 {
		t.Fatalf("%d proposals after the halt, want %d", len(ps), before+1)
	}
	p := ps[len(ps)-1]
	var changed []string
	for _, c := range p.Changes {
		if c.Path != "version" && c.Path != "content_hash" {
			changed = append(changed, c.String())
		}
	}
	if p.State != heal.StateProposed || p.BaseVersion != version || p.Evidence.RunID != rec.RunID ||
		len(changed) != 1 || !strings.HasPrefix(changed[0], "~ steps[search].target.name.value: ") || !strings.HasSuffix(changed[0], `"`+name+`"`) {
		t.Fatalf("proposal %s (%s, base %s, run %s): changes %v; want one name change to %q", p.ID, p.State, p.BaseVersion, p.Evidence.RunID, changed, name)
	}
	note, err := os.ReadFile(filepath.Join(w.dataDir, "runs", rec.RunID, "heal.jsonl"))
	if err != nil || !strings.Contains(string(note), p.ID) {
		t.Fatalf("the halted run's evidence does not name proposal %s: %v %s", p.ID, err, note)
	}
	return p
}

// evalApprove evaluates p under the drift in force and approves it as alice.
func (w *healWorld) evalApprove(t *testing.T, p heal.Proposal) {
	t.Helper()
	if r := runBin(t, w.env, "heal", "approve", p.ID, "--as", "alice"); r.code == 0 {
		t.Fatalf("approve before an eval succeeded:\n%s", r.stdout)
	}
	r := runBin(t, w.env, "heal", "eval", p.ID, "--base-url", w.app.URL(), "--as", "alice")
	if r.code != 0 || !strings.Contains(r.stdout, "eval PASSED") {
		t.Fatalf("heal eval: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, w.env, "heal", "approve", p.ID); r.code == 0 || !strings.Contains(r.stderr, "--as") {
		t.Fatalf("approve without --as: exit %d %s", r.code, r.stderr)
	}
	r = runBin(t, w.env, "heal", "approve", p.ID, "--as", "alice")
	if r.code != 0 || !strings.Contains(r.stdout, p.BaseHash) || !strings.Contains(r.stdout, p.Hash) {
		t.Fatalf("heal approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHealRenamedLabel is issue 29's story on real Chromium and the cua
// binary: MemberDesk renames Search to "Look up"; the run halts
// TARGET_NOT_FOUND and writes one proposal changing only that name; eval
// passes; alice approves; five canary runs of ID@active succeed; a second
// rename ("Go") breaks the healed step and its first failing run reverts
// ID@active to 1.2.0; the proposal that run wrote, approved in turn, is
// rolled back by hand.
func TestHealRenamedLabel(t *testing.T) {
	w := newHealWorld(t)
	w.drift(t, "rename_search_button", renameLookUp, "Look up")
	p := w.halted(t, "1.2.0", "Look up", 0)
	if r := runBin(t, w.env, "heal", "diff", p.ID); r.code != 0 || strings.Contains(r.stdout, "QUARANTINED") {
		t.Fatalf("heal diff: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.evalApprove(t, p)
	w.drift(t, "rename_search_button", renameLookUp, "Look up") // eval leaves MemberDesk reset
	for i := 1; i <= heal.DefaultCanaryRuns; i++ {
		code, rec, stderr := w.lookup(t, lookup+"@active")
		if code != 0 || rec.Status != domain.StatusSuccess || rec.Capability != lookup+"@1.2.1" || rec.Outputs["savings_balance"] != "1234.56" {
			t.Fatalf("canary run %d: exit %d %s %s on %s (%v)\n%s", i, code, rec.Status, rec.FailureCode, rec.Capability, rec.Outputs, stderr)
		}
		if !strings.Contains(stderr, "canary run ") {
			t.Errorf("canary run %d does not say so: %s", i, stderr)
		}
	}
	w.drift(t, "rename_search_button", renameGo, "Go")
	code, rec, stderr := w.lookup(t, lookup+"@active")
	if code != 2 || rec.Capability != lookup+"@1.2.1" || !strings.Contains(stderr, "reverted "+lookup+"@active to 1.2.0") {
		t.Fatalf("breaking run: exit %d %s on %s; stderr %s", code, rec.Status, rec.Capability, stderr)
	}
	ps := w.proposals(t)
	if ps[0].State != heal.StateReverted || ps[0].Canary == nil || len(ps[0].Canary.Done) != heal.DefaultCanaryRuns || ps[0].Canary.Failed != rec.RunID {
		t.Fatalf("first proposal after the revert: %s %+v", ps[0].State, ps[0].Canary)
	}
	// The breaking run (of 1.2.1) proposed "Go" as 1.2.2; approved, it
	// is active until alice rolls it back to 1.2.0.
	if len(ps) != 2 || ps[1].BaseVersion != "1.2.1" || ps[1].Version != "1.2.2" || ps[1].Evidence.Candidate.Name != "Go" {
		t.Fatalf("proposals after the breaking run: %+v", ps)
	}
	w.evalApprove(t, ps[1])
	w.drift(t, "rename_search_button", renameGo, "Go")
	if code, rec, _ := w.lookup(t, lookup+"@active"); code != 0 || rec.Capability != lookup+"@1.2.2" {
		t.Fatalf("after approving 1.2.2: exit %d on %s", code, rec.Capability)
	}
	if r := runBin(t, w.env, "heal", "rollback", ps[1].ID, "--as", "alice"); r.code != 0 || !strings.Contains(r.stdout, lookup+"@active is 1.2.0 again") {
		t.Fatalf("heal rollback: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := w.ctl.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code, rec, _ := w.lookup(t, lookup+"@active"); code != 0 || rec.Capability != lookup+"@1.2.0" {
		t.Fatalf("after rollback: exit %d on %s, want 1.2.0", code, rec.Capability)
	}
	r := runBin(t, w.env, "heal", "show", ps[1].ID)
	for _, want := range []string{"rolled_back", "approved by alice", "evaluated", "canary"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("heal show lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestHealDuplicateLabelNoProposal: with two "Search" buttons the run halts
// TARGET_AMBIGUOUS and writes no proposal; its evidence says why.
func TestHealDuplicateLabelNoProposal(t *testing.T) {
	w := newHealWorld(t)
	w.drift(t, "duplicate_search_button", int64(slices.Index(mockapp.DriftChanges, "duplicate_search_button")+1), "")
	code, rec, _ := w.lookup(t, lookup)
	if code != 2 || rec.FailureCode != domain.CodeTargetAmbiguous {
		t.Fatalf("exit %d %s %s, want exit 2 TARGET_AMBIGUOUS", code, rec.Status, rec.FailureCode)
	}
	if ps := w.proposals(t); len(ps) != 0 {
		t.Fatalf("%d proposals, want none: %+v", len(ps), ps)
	}
	note, err := os.ReadFile(filepath.Join(w.dataDir, "runs", rec.RunID, "heal.jsonl"))
	if err != nil || !strings.Contains(string(note), "duplicated label") {
		t.Fatalf("the run's evidence does not say why nothing was proposed: %v %s", err, note)
	}
}
