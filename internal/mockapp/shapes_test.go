package mockapp

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	checkbox     = regexp.MustCompile(`<label><input type="checkbox" name="item" value="[^"]*"( checked)?> ([^<]*)</label>`)
	approvalsRow = regexp.MustCompile(`<tr class="[^"]*"><td>([^<]*)</td><td>([^<]*)</td><td>`)
)

// checkboxes returns the checklist's documents and which are ticked.
func checkboxes(body string) (names, ticked []string) {
	for _, m := range checkbox.FindAllStringSubmatch(body, -1) {
		names = append(names, m[2])
		if m[1] != "" {
			ticked = append(ticked, m[2])
		}
	}
	return names, ticked
}

// pendingItems returns the item names of the Pending approvals table.
func pendingItems(body string) []string {
	table, _, _ := strings.Cut(body, "<h2>Approved</h2>")
	var out []string
	for _, m := range approvalsRow.FindAllStringSubmatch(table, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestChecklistPage: the nav links to the checklist; the picker opens a
// member's checklist, whose ticks are saved exactly as sent, reported as
// "Saved: N items", listed, ticked on the next opening and held in the
// control state; an unknown document or a malformed member changes
// nothing.
func TestChecklistPage(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	nav := b.get(t, "/nav")
	for _, l := range shapeNavLinks {
		if !hasLink(nav.body, l.Text) || !strings.Contains(nav.body, `href="`+l.Href+`" target="content"`) {
			t.Errorf("nav lacks %q → %s", l.Text, l.Href)
		}
	}
	if i, j := strings.Index(nav.body, ">Home Branch<"), strings.Index(nav.body, ">Sign Off<"); i < 0 || j < i {
		t.Error("the task-shape links are not before Sign Off")
	}
	if r := b.post(t, checklistPath, url.Values{"member": {"12x"}}); r.status != http.StatusBadRequest || !hasRole(r.body, "alert", "Member number must be 5 digits") {
		t.Errorf("a malformed member: %d, want 400 with the alert", r.status)
	}
	r := b.post(t, checklistPath, url.Values{"member": {"12345"}})
	if r.status != http.StatusSeeOther || r.location() != "/content/member/12345/checklist" {
		t.Fatalf("open checklist: %d %q", r.status, r.location())
	}
	page := b.get(t, r.location())
	names, ticked := checkboxes(page.body)
	if !slices.Equal(names, checklistFixture) || len(ticked) != 0 || !hasRole(page.body, "status", "Nothing saved yet") ||
		!strings.Contains(page.body, "<h2") || !strings.Contains(page.body, "Member 12345</h2>") || !hasButton(page.body, "Save checklist") {
		t.Fatalf("fresh checklist: documents %v ticked %v\n%s", names, ticked, page.body)
	}
	path := "/content/member/12345/checklist"
	bad := b.post(t, path, url.Values{"item": {"Photo ID", "Passport"}})
	if bad.status != http.StatusBadRequest || !hasRole(bad.body, "alert", `item: unknown document &#34;Passport&#34;`) {
		t.Errorf("an unknown document: %d\n%s", bad.status, bad.body)
	}
	if st := b.state(t); len(st.Shapes.Checklists) != 0 {
		t.Errorf("a refused save saved %v", st.Shapes.Checklists)
	}
	saved := b.post(t, path, url.Values{"item": {"Signed agreement", "Photo ID"}})
	if saved.status != http.StatusSeeOther || saved.location() != path+"?saved=1" {
		t.Fatalf("save: %d %q", saved.status, saved.location())
	}
	after := b.get(t, saved.location())
	if _, ticked := checkboxes(after.body); !slices.Equal(ticked, []string{"Photo ID", "Signed agreement"}) ||
		!hasRole(after.body, "status", "Saved: 2 items") ||
		!strings.Contains(after.body, `<ul aria-label="Saved documents" class="md-checklist-saved"><li>Photo ID</li><li>Signed agreement</li></ul>`) {
		t.Errorf("after saving: ticked %v\n%s", ticked, after.body)
	}
	st := b.state(t)
	if got := st.Shapes.Checklists["12345"]; !slices.Equal(got, []string{"Photo ID", "Signed agreement"}) || st.Shapes.ChecklistSaves["12345"] != 1 {
		t.Errorf("control state: %v, saves %v", st.Shapes.Checklists, st.Shapes.ChecklistSaves)
	}
	if again := b.get(t, path); !hasRole(again.body, "status", "On file: 2 items") {
		t.Errorf("the next opening (the second) does not say what is on file:\n%s", again.body)
	}
	for _, bad := range []string{"45678", "99999", "1234"} {
		if r := b.get(t, "/content/member/"+bad+"/checklist"); r.status == http.StatusOK && strings.Contains(r.body, "Save checklist") {
			t.Errorf("member %s shows a checklist", bad)
		}
	}
}

// TestImportantNoticeEveryThirdOpening: a session's third and sixth
// openings of a checklist show the important notice instead, on every
// reload until acknowledged; the acknowledgement returns to the checklist
// without counting it, a save's own page never counts, and another
// session keeps its own count.
func TestImportantNoticeEveryThirdOpening(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	path := "/content/member/23456/checklist"
	var shown []int
	for n := 1; n <= 6; n++ {
		r := b.get(t, path)
		if !hasHeading(r.body, "Important notice") {
			if !hasButton(r.body, "Save checklist") {
				t.Fatalf("opening %d: neither the checklist nor the notice\n%s", n, r.body)
			}
			continue
		}
		shown = append(shown, n)
		if !hasButton(r.body, "Acknowledge") || strings.Contains(r.body, "Save checklist") || !strings.Contains(r.body, importantText) {
			t.Errorf("opening %d: the notice page\n%s", n, r.body)
		}
		if again := b.get(t, path); !hasHeading(again.body, "Important notice") {
			t.Errorf("opening %d: a reload before acknowledging skips the notice", n)
		}
		if n == 3 { // a save between does not count
			if s := b.get(t, path+"?saved=1"); !hasButton(s.body, "Save checklist") {
				t.Error("the page after a save shows the notice")
			}
		}
		ack := b.post(t, importantAckPath, url.Values{"next": {path}})
		if ack.status != http.StatusSeeOther || ack.location() != path {
			t.Fatalf("acknowledge: %d %q", ack.status, ack.location())
		}
		if back := b.get(t, path); !hasButton(back.body, "Save checklist") {
			t.Errorf("opening %d: the page after acknowledging is not the checklist", n)
		}
	}
	if !slices.Equal(shown, []int{3, 6}) {
		t.Errorf("notice on openings %v, want [3 6]", shown)
	}
	st := b.state(t)
	if st.Shapes.ImportantNotices != 4 || st.Shapes.ImportantAcks != 2 { // two shows and two reloads
		t.Errorf("notices %d acks %d, want 4 and 2", st.Shapes.ImportantNotices, st.Shapes.ImportantAcks)
	}
	other := b.newClient(t)
	b.signOnWith(t, other)
	if r := b.do(t, other, http.MethodGet, path, nil); !hasButton(r.body, "Save checklist") {
		t.Error("another session's first opening shows the notice")
	}
	if r := b.post(t, importantAckPath, url.Values{"next": {"https://evil.example/"}}); r.location() != homePath {
		t.Errorf("an off-site next: redirected to %q", r.location())
	}
}

// TestApprovalsPage: each pending row has its own Approve button;
// approving moves exactly that row to Approved under a reference and says
// so; approving it again is refused and changes nothing.
func TestApprovalsPage(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	page := b.get(t, approvalsPath)
	if got := pendingItems(page.body); !slices.Equal(got, []string{"Office chairs", "Laptop repair", "Conference travel", "Printer toner"}) ||
		strings.Count(page.body, ">Approve</button>") != 4 || !strings.Contains(page.body, "Nothing approved yet") {
		t.Fatalf("pending %v\n%s", got, page.body)
	}
	r := b.post(t, approvePath, url.Values{"id": {"PA-103"}})
	if r.status != http.StatusSeeOther || r.location() != approvalsPath+"?approved=PA-103" {
		t.Fatalf("approve: %d %q", r.status, r.location())
	}
	after := b.get(t, r.location())
	if !hasRole(after.body, "status", "Approved: Conference travel (APV-0001)") ||
		!slices.Equal(pendingItems(after.body), []string{"Office chairs", "Laptop repair", "Printer toner"}) ||
		!strings.Contains(after.body, "<td>Conference travel</td><td>$2,140.50</td><td>APV-0001</td>") {
		t.Errorf("after approving:\n%s", after.body)
	}
	again := b.post(t, approvePath, url.Values{"id": {"PA-103"}})
	if again.status != http.StatusConflict || !hasRole(again.body, "alert", "This item is not pending") {
		t.Errorf("approving twice: %d", again.status)
	}
	st := b.state(t)
	if len(st.Shapes.Approved) != 1 || st.Shapes.Approved[0] != (Approval{ID: "PA-103", Item: "Conference travel", Amount: "2140.50", Reference: "APV-0001", Operator: b.srv.opts.Operator}) || len(st.Shapes.Pending) != 3 {
		t.Errorf("control state: %+v", st.Shapes)
	}
}

// TestHomeBranchPage: a branch code with a lower-case letter is refused
// with the alert and saves nothing; an upper-case one is saved and shown.
func TestHomeBranchPage(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	form := b.get(t, branchPath)
	if !strings.Contains(form.body, `<label for="branch-code">Branch code</label>`) || !hasButton(form.body, "Save branch") {
		t.Fatalf("the form:\n%s", form.body)
	}
	for _, tc := range []struct{ member, code, alert string }{
		{"12345", "nth", "Branch code must be upper case"},
		{"12345", "Nth", "Branch code must be upper case"},
		{"12345", "", "Branch code is required"},
		{"12345", "NORTH", "Branch code must be 3 letters"},
		{"12345", "ABC", "Unknown branch code ABC"},
		{"1234", "NTH", "Member number must be 5 digits"},
		{"99999", "NTH", "Member not found"},
	} {
		r := b.post(t, branchPath, url.Values{"member": {tc.member}, "branch": {tc.code}})
		if r.status < 400 || !hasRole(r.body, "alert", tc.alert) {
			t.Errorf("%s %q: %d, want the alert %q", tc.member, tc.code, r.status, tc.alert)
		}
	}
	if st := b.state(t); len(st.Shapes.Branches) != 0 {
		t.Fatalf("refused saves saved %v", st.Shapes.Branches)
	}
	r := b.post(t, branchPath, url.Values{"member": {"12345"}, "branch": {"NTH"}})
	if r.status != http.StatusSeeOther || r.location() != "/content/member/12345/branch?saved=1" {
		t.Fatalf("save: %d %q", r.status, r.location())
	}
	shown := b.get(t, r.location())
	if v, _ := rowValue(tableRows(shown.body), "Home branch"); v != "NTH" || !hasRole(shown.body, "status", "Home branch saved") {
		t.Errorf("saved branch page:\n%s", shown.body)
	}
	if st := b.state(t); st.Shapes.Branches["12345"] != "NTH" {
		t.Errorf("control state: %v", st.Shapes.Branches)
	}
}

// TestShapeDrift: each change alters the named page as documented, the
// approvals queue goes back to its fixture, "off" restores both, and a bad
// request names its field and changes nothing.
func TestShapeDrift(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	set := func(body string) int {
		t.Helper()
		return b.control(t, http.MethodPost, "/_control/shapes", body, nil)
	}
	checklist := func() []string {
		path := "/content/member/34567/checklist"
		r := b.get(t, path)
		if hasHeading(r.body, "Important notice") {
			b.post(t, importantAckPath, url.Values{"next": {path}})
			r = b.get(t, path)
		}
		names, _ := checkboxes(r.body)
		return names
	}
	for _, tc := range []struct {
		page, change string
		want         []string
	}{
		{"checklist", "renamed_item", []string{"Proof of address", "Photo identification", "Signed agreement", "Income statement", "Tax form"}},
		{"checklist", "extra_item", []string{"Proof of address", "Proof of income", "Photo ID", "Signed agreement", "Income statement", "Tax form"}},
		{"checklist", "missing_item", []string{"Proof of address", "Photo ID", "Income statement", "Tax form"}},
		{"approvals", "renamed_item", []string{"Office chairs", "Notebook repair", "Conference travel", "Printer toner"}},
		{"approvals", "extra_item", []string{"Catering invoice", "Office chairs", "Laptop repair", "Conference travel", "Printer toner"}},
		{"approvals", "missing_item", []string{"Office chairs", "Laptop repair", "Printer toner"}},
	} {
		if st := set(`{"page":"` + tc.page + `","change":"` + tc.change + `"}`); st != http.StatusOK {
			t.Fatalf("%s %s: %d", tc.page, tc.change, st)
		}
		got := checklist()
		if tc.page == "approvals" {
			got = pendingItems(b.get(t, approvalsPath).body)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: %v, want %v", tc.page, tc.change, got, tc.want)
		}
	}
	for body, field := range map[string]string{
		`{"page":"checklist"}`:                    "change",
		`{"page":"checklist","change":"reorder"}`: "change",
		`{"change":"extra_item"}`:                 "page",
		`{"page":"ledger","change":"extra_item"}`: "page",
		`{"page":"checklist","change":"off"}`:     "page",
		`{"page":"checklist","change":1}`:         "change",
		`{"page":"checklist","change":"x","y":1}`: "body",
		`{"page":"checklist","change":"off"} {}`:  "body",
		`{"page":"approvals","change":"extra"}`:   "change",
	} {
		var cerr controlError
		if st := b.control(t, http.MethodPost, "/_control/shapes", body, &cerr); st != http.StatusBadRequest || cerr.Field != field {
			t.Errorf("%s: %d field %q (%s), want 400 naming %s", body, st, cerr.Field, cerr.Error, field)
		}
	}
	var status ShapeDriftStatus
	b.control(t, http.MethodGet, "/_control/shapes", "", &status)
	if status.Drift == nil || status.Drift.Page != "approvals" || status.Drift.Change != "missing_item" || status.Drift.Detail == "" {
		t.Errorf("refused requests changed the drift: %+v", status.Drift)
	}
	if set(`{"change":"off"}`) != http.StatusOK || !slices.Equal(checklist(), checklistFixture) || len(pendingItems(b.get(t, approvalsPath).body)) != 4 {
		t.Error("off does not restore the pages")
	}
	if b.state(t).Shapes.Drift != nil {
		t.Error("the control state still reports a drift after off")
	}
}
