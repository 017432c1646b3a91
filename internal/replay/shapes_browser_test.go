package replay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// loadExample loads examples/capabilities/NAME.yaml; with edits (old, new
// pairs) it loads a copy with each edit applied, sealed again.
func loadExample(t *testing.T, name string, edits ...string) *capability.Loaded {
	t.Helper()
	path := filepath.Join(examplesDir, name+".yaml")
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
			t.Fatalf("%s: no %q to edit", name, edits[i])
		}
		text = strings.ReplaceAll(text, edits[i], edits[i+1])
	}
	text = text[:strings.LastIndex(text, "content_hash:")]
	cp := filepath.Join(t.TempDir(), name+".yaml")
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

// replayOn replays c with inputs on the warm world's session.
func (w *warmWorld) replayOn(t *testing.T, c *capability.Loaded, inputs map[string]string) *domain.RunRecord {
	t.Helper()
	w.n++
	id := fmt.Sprintf("shape-%d", w.n)
	rec, err := replay.Run(t.Context(), replay.Options{
		Capability: c, Library: w.lib, Inputs: inputs, BaseURL: w.app.URL(), Surface: w.sess,
		Secrets: memberDeskSecrets{}, Redactor: redact.New(), DataDir: w.dir, RunID: id,
	})
	if err != nil {
		t.Fatalf("replay %s: %v", c.Capability.ID, err)
	}
	t.Logf("%s %s %v: %s %s %s %v", id, c.Capability.ID, inputs, rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	return rec
}

// shapes reads what MemberDesk holds for the task-shape pages.
func (w *warmWorld) shapes(t *testing.T) mockapp.Shapes {
	t.Helper()
	st, err := mockapp.NewClient(w.app.URL(), nil).State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Shapes
}

// stepStatus is the status of step id in rec ("" when it did not run).
func stepStatus(rec *domain.RunRecord, id string) string {
	for _, s := range rec.Steps {
		if s.ID == id {
			return s.Status
		}
	}
	return ""
}

// TestHomeBranchUpperCaseOnChromium (issue 24): the reference
// memberdesk.home_branch types " nth" as NTH (its input's transform
// [trim, upper]) into the Branch code field that refuses lower case, and
// MemberDesk holds NTH; the same capability without the transform types
// "wst", the page refuses it, and the run does not end SUCCESS and saves
// nothing.
func TestHomeBranchUpperCaseOnChromium(t *testing.T) {
	w := newWarmWorld(t)
	rec := w.replayOn(t, loadExample(t, "memberdesk.home_branch"), map[string]string{"member_id": "12345", "branch_code": " nth"})
	if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["branch_name"]) != "North" {
		t.Fatalf("home_branch 12345 nth: %s (%s: %s) %v, want SUCCESS North", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	if got := w.shapes(t).Branches; got["12345"] != "NTH" || len(got) != 1 {
		t.Fatalf("MemberDesk holds %v, want 12345 at NTH", got)
	}
	raw := loadExample(t, "memberdesk.home_branch", "    transform: [trim, upper]\n", "", `    pattern: "[A-Z]{3}"`+"\n", "")
	rec = w.replayOn(t, raw, map[string]string{"member_id": "23456", "branch_code": "wst"})
	if rec.Status == domain.StatusSuccess || !strings.Contains(rec.Message, "Branch code must be upper case") {
		t.Errorf("without the transform: %s (%s) %v; want a halt quoting the page's refusal", rec.Status, rec.Message, rec.Outputs)
	}
	if got := w.shapes(t).Branches; got["23456"] != "" {
		t.Errorf("a refused lower-case code was saved: %v", got)
	}
}

// TestChecklistNoticeOnChromium (issue 24): on one warm session the
// reference memberdesk.checklist_status opens the checklist four times;
// the third opening shows the important notice, which its optional step
// acknowledges (run three), and the step is skipped on the others; every
// run answers the status of the member asked for. Without when, the step
// halts a run whose opening shows no notice.
func TestChecklistNoticeOnChromium(t *testing.T) {
	w := newWarmWorld(t)
	status := loadExample(t, "memberdesk.checklist_status")
	for n := 1; n <= 4; n++ {
		member := []string{"12345", "23456"}[n%2]
		rec := w.replayOn(t, status, member2(member))
		if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["on_file"]) != "Nothing saved yet" {
			t.Fatalf("run %d: %s (%s: %s) %v, want SUCCESS", n, rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
		}
		got := stepStatus(rec, "acknowledge")
		if ran := got != "skipped" && got != ""; ran != (n == 3) {
			t.Errorf("run %d: acknowledge %q; it must run on the third opening only", n, got)
		}
	}
	if sh := w.shapes(t); sh.ImportantNotices != 1 || sh.ImportantAcks != 1 {
		t.Errorf("MemberDesk showed %d notices and had %d acknowledged, want 1 and 1", sh.ImportantNotices, sh.ImportantAcks)
	}
	strict := loadExample(t, "memberdesk.checklist_status",
		"    when:\n      node_exists: {role: button, name: Acknowledge, scope: {frame: content}}\n", "")
	rec := w.replayOn(t, strict, member2("12345")) // the fifth opening: no notice
	if rec.Status == domain.StatusSuccess || !strings.Contains(rec.Message, "Acknowledge") {
		t.Errorf("without when, an opening with no notice: %s (%s); want a halt naming Acknowledge", rec.Status, rec.Message)
	}
}

// setShapeDrift puts a shape drift in force on the world's MemberDesk.
func (w *warmWorld) setShapeDrift(t *testing.T, page, change string) {
	t.Helper()
	if _, err := mockapp.NewClient(w.app.URL(), nil).SetShapeDrift(t.Context(), page, change); err != nil {
		t.Fatalf("shape drift %s %s: %v", page, change, err)
	}
}

// TestDocumentChecklistOnChromium (issue 24): the reference
// memberdesk.document_checklist ticks Photo ID and Signed agreement for a
// member and MemberDesk saves exactly those; under each checklist drift it
// halts or answers right, never SUCCESS with a wrong tick (checked in
// MemberDesk's saved state): a renamed or a missing document halts before
// anything is saved, and an extra document is left unticked. A second run
// leaves a document already ticked ticked.
func TestDocumentChecklistOnChromium(t *testing.T) {
	w := newWarmWorld(t)
	c := loadExample(t, "memberdesk.document_checklist")
	docs := `["Photo ID", "Signed agreement"]`
	want := []string{"Photo ID", "Signed agreement"}
	for i, tc := range []struct {
		change string
		ok     bool
	}{{"", true}, {"extra_item", true}, {"renamed_item", false}, {"missing_item", false}} {
		member := []string{"12345", "23456", "34567", "56789"}[i]
		if tc.change != "" {
			w.setShapeDrift(t, mockapp.ShapePageChecklist, tc.change)
		}
		rec := w.replayOn(t, c, map[string]string{"member_id": member, "documents": docs})
		saved, done := w.shapes(t).Checklists[member]
		switch {
		case tc.ok && (rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["saved"]) != "Saved: 2 items"):
			t.Errorf("drift %q: %s (%s: %s) %v, want SUCCESS 'Saved: 2 items'", tc.change, rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
		case tc.ok && !slices.Equal(saved, want):
			t.Errorf("drift %q: MemberDesk saved %v, want %v", tc.change, saved, want)
		case !tc.ok && rec.Status == domain.StatusSuccess:
			t.Errorf("drift %q: SUCCESS with MemberDesk holding %v; want a halt", tc.change, saved)
		case !tc.ok && (done || rec.FailureCode != domain.CodeTargetNotFound):
			t.Errorf("drift %q: %s %s, MemberDesk holds %v (saved %v); want a halt before the save", tc.change, rec.Status, rec.FailureCode, saved, done)
		}
	}
	// Again on 12345, whose Photo ID is ticked already: it stays ticked
	// (its tick is skipped, not clicked off), Proof of address is added
	// and Signed agreement, not named, stays as saved.
	w.setShapeDrift(t, "", "off")
	rec := w.replayOn(t, c, map[string]string{"member_id": "12345", "documents": `["Photo ID", "Proof of address"]`})
	saved := w.shapes(t).Checklists["12345"]
	if rec.Status != domain.StatusSuccess || !slices.Equal(saved, []string{"Proof of address", "Photo ID", "Signed agreement"}) ||
		stepStatus(rec, "tick_each[0].tick") != "skipped" {
		t.Errorf("a second run: %s (%s), tick of Photo ID %q, MemberDesk holds %v", rec.Status, rec.Message, stepStatus(rec, "tick_each[0].tick"), saved)
	}
}

// TestApprovePendingOnChromium (issue 24): the reference
// memberdesk.approve_pending approves Laptop repair and Conference travel
// by row and returns their references; under each approvals drift it
// halts or answers right, never SUCCESS with a wrong approval (checked in
// MemberDesk's queue): an extra row is left pending, a renamed first item
// halts with nothing approved, and a missing second item halts after the
// first one's approval, which the record reports as sent.
func TestApprovePendingOnChromium(t *testing.T) {
	w := newWarmWorld(t)
	c := loadExample(t, "memberdesk.approve_pending")
	items := map[string]string{"items": `["Laptop repair", "Conference travel"]`}
	approved := func() []string {
		var out []string
		for _, a := range w.shapes(t).Approved {
			out = append(out, a.Item+"="+a.Reference)
		}
		return out
	}
	for _, tc := range []struct {
		change string
		want   []string // approved in MemberDesk after the run
		ok     bool
	}{
		{"", []string{"Laptop repair=APV-0001", "Conference travel=APV-0002"}, true},
		{"extra_item", []string{"Laptop repair=APV-0003", "Conference travel=APV-0004"}, true},
		{"renamed_item", nil, false},
		{"missing_item", []string{"Laptop repair=APV-0005"}, false},
	} {
		if tc.change == "" {
			w.setShapeDrift(t, "", "off")
		} else {
			w.setShapeDrift(t, mockapp.ShapePageApprovals, tc.change) // the queue starts again from its fixture
		}
		rec := w.replayOn(t, c, items)
		got := approved()
		if !slices.Equal(got, tc.want) {
			t.Errorf("drift %q: MemberDesk approved %v, want %v", tc.change, got, tc.want)
		}
		if tc.ok {
			refs := fmt.Sprint(rec.Outputs["references"])
			wantRefs := fmt.Sprint([]string{strings.TrimPrefix(tc.want[0], "Laptop repair="), strings.TrimPrefix(tc.want[1], "Conference travel=")})
			if rec.Status != domain.StatusSuccess || refs != wantRefs {
				t.Errorf("drift %q: %s (%s: %s) references %s, want SUCCESS %s", tc.change, rec.Status, rec.FailureCode, rec.Message, refs, wantRefs)
			}
			continue
		}
		if rec.Status == domain.StatusSuccess || rec.FailureCode != domain.CodeTargetNotFound {
			t.Errorf("drift %q: %s %s (%s); want a TARGET_NOT_FOUND halt", tc.change, rec.Status, rec.FailureCode, rec.Message)
		}
		if len(tc.want) > 0 && stepStatus(rec, "approve_each[0].approve") == "" {
			t.Errorf("drift %q: the record does not show the first item's approval", tc.change)
		}
	}
}
