package recorder

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

const quickGolden = "testdata/memberdesk.savings_balance_quick.golden.yaml"

// screen builds a flat final snapshot: a document root and the given
// nodes as its children.
func screen(nodes ...domain.Node) *domain.UiSnapshot {
	s := &domain.UiSnapshot{URL: testBase + "/", Nodes: []domain.Node{{Index: 0, Role: "document", Name: "MemberDesk", Parent: -1}}}
	for i, n := range nodes {
		n.Index, n.Parent, n.Depth = i+1, 0, 1
		n.Bounds = domain.Rect{X: 10, Y: float64(20 * (i + 1)), W: 100, H: 18}
		s.Nodes = append(s.Nodes, n)
		s.Nodes[0].Children = append(s.Nodes[0].Children, i+1)
	}
	return s
}

// The nodes of MemberDesk's screens that the savings trace's steps target.
var (
	navLink     = domain.Node{Role: "link", Name: "Member Search", Frame: "nav"}
	memberField = domain.Node{Role: "textbox", Name: "Member number", Frame: "content", States: domain.NodeStates{Editable: true, Focusable: true}}
	searchBtn   = domain.Node{Role: "button", Name: "Search", Frame: "content"}
	details     = domain.Node{Role: "heading", Name: "Member Details", Frame: "content"}
)

// identityPost is the search's postcondition naming the member asked for.
func identityPost() *domain.Predicate {
	return &domain.Predicate{AllOf: []domain.Predicate{
		{NodeExists: target("heading", "Member Details", "content")},
		{NodeExists: &domain.TargetDescriptor{
			Role: "cell", Name: &domain.NameMatch{Value: "12345", Match: domain.MatchExact},
			Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: "Member number"}, Scope: &domain.Scope{Frame: "content"},
		}},
	}}
}

// lookupTrace is the savings-balance trace, with the search's
// postcondition naming the member when identity is set.
func lookupTrace(tb testing.TB, identity bool) *domain.Trace {
	tb.Helper()
	tr := loadTrace(tb, "savings_balance.trace.json")
	tr.Inputs = map[string]string{"12345": "member_id"}
	if identity {
		tr.Steps[4].Postcondition = identityPost()
	}
	return tr
}

// TestProposeReentry: a reentry is proposed at the earliest step whose
// target the final screen shows, only when the validator admits it, and a
// note says what was decided.
func TestProposeReentry(t *testing.T) {
	t.Parallel()
	elevatedNav := func(tr *domain.Trace) { tr.Steps[1].Action.Risk = domain.RiskElevated }
	tests := []struct {
		name     string
		identity bool
		edit     func(*domain.Trace)
		final    *domain.UiSnapshot
		wantStep string // "" for no reentry
		wantWhen *domain.TargetDescriptor
		notes    []string // fragments of one note; nil for no reentry note
	}{
		{name: "the details page keeps the navigation link", identity: true,
			final:    screen(navLink, details),
			wantStep: "click_member_search", wantWhen: &domain.TargetDescriptor{Role: "link", Name: &domain.NameMatch{Value: "Member Search", Match: domain.MatchExact}, Scope: &domain.Scope{Frame: "nav"}},
			notes: []string{"reentry proposed at step click_member_search", "a reviewer must confirm"}},
		{name: "the details page shows the search field again", identity: true,
			final:    screen(memberField, searchBtn, details),
			wantStep: "type_member_number", wantWhen: &domain.TargetDescriptor{Role: "textbox", Name: &domain.NameMatch{Value: "Member number", Match: domain.MatchExact}, Scope: &domain.Scope{Frame: "content"}},
			notes: []string{"reentry proposed at step type_member_number", `textbox "Member number"`, "before sealing"}},
		{name: "the final screen shows neither", identity: true,
			final: screen(details),
			notes: []string{"no reentry proposed", "shows the target of no step"}},
		{name: "no step after the input is proposed", identity: true,
			final: screen(searchBtn, details),
			notes: []string{"no reentry proposed", "shows the target of no step"}},
		{name: "an ambiguous link is passed over", identity: true,
			final:    screen(navLink, navLink, memberField, details),
			wantStep: "type_member_number", wantWhen: &domain.TargetDescriptor{Role: "textbox", Name: &domain.NameMatch{Value: "Member number", Match: domain.MatchExact}, Scope: &domain.Scope{Frame: "content"}},
			notes: []string{"reentry proposed at step type_member_number"}},
		{name: "the field in another frame does not count", identity: true,
			final: screen(domain.Node{Role: "textbox", Name: "Member number", Frame: "nav"}, details),
			notes: []string{"no reentry proposed", "shows the target of no step"}},
		{name: "no identity check",
			final: screen(navLink, details),
			notes: []string{"no reentry proposed at step click_member_search", "the validator refuses it: reentry: reentry needs an identity check"}},
		{name: "an elevated step would be skipped", identity: true, edit: elevatedNav,
			final: screen(memberField, details),
			notes: []string{"no reentry proposed at step type_member_number", `reentry.step: step "click_member_search" before "type_member_number" is elevated`}},
		{name: "no final screen", identity: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := lookupTrace(t, tc.identity)
			if tc.edit != nil {
				tc.edit(tr)
			}
			opts := savingsOptions(t)
			opts.FinalScreen = tc.final
			res, data := mustCompile(t, tr, opts)
			c := res.Capability
			switch {
			case tc.wantStep == "" && c.Reentry != nil:
				t.Fatalf("reentry proposed: %+v", c.Reentry)
			case tc.wantStep != "" && (c.Reentry == nil || c.Reentry.Step != tc.wantStep):
				t.Fatalf("reentry = %+v, want step %s", c.Reentry, tc.wantStep)
			case tc.wantStep != "":
				if want := (domain.Predicate{NodeExists: tc.wantWhen}); !reflect.DeepEqual(c.Reentry.When, want) {
					t.Errorf("reentry.when = %+v, want %+v", c.Reentry.When.NodeExists, tc.wantWhen)
				}
				if !strings.Contains(string(data), "\nreentry:\n  step: "+tc.wantStep+"\n") {
					t.Errorf("the written file holds no reentry:\n%s", data)
				}
			}
			if tc.notes == nil {
				if hasNote(res.Notes, "reentry") {
					t.Errorf("a reentry note without a final screen: %s", strings.Join(res.Notes, "\n"))
				}
				return
			}
			if !hasNote(res.Notes, tc.notes...) {
				t.Errorf("no note with %q in:\n%s", tc.notes, strings.Join(res.Notes, "\n"))
			}
		})
	}
}

// TestProposedReentryMatchesReference compiles the lookup whose final
// screen keeps the navigation: the draft is the golden, it proposes the
// hand-written quick lookup's reentry, and it round-trips through Marshal,
// Parse, Seal and Load with its reentry intact.
func TestProposedReentryMatchesReference(t *testing.T) {
	t.Parallel()
	opts := savingsOptions(t)
	opts.ID = "memberdesk.savings_balance_quick"
	opts.FinalScreen = screen(navLink, details)
	res, data := mustCompile(t, lookupTrace(t, true), opts)
	checkGolden(t, quickGolden, data)
	c := res.Capability

	ref := loadExample(t, "memberdesk.savings_balance_quick")
	if c.Reentry == nil || c.Reentry.Step != c.Steps[0].ID || ref.Reentry.Step != ref.Steps[0].ID || !reflect.DeepEqual(c.Reentry.When, ref.Reentry.When) {
		t.Errorf("reentry = %+v, the reference's %+v", c.Reentry, ref.Reentry)
	}
	if !capability.ChecksIdentity(c) {
		t.Error("the draft carries no identity check")
	}

	path := filepath.Join(t.TempDir(), "quick.yaml")
	if err := capability.WriteFileAtomic(path, data); err != nil {
		t.Fatal(err)
	}
	hash, err := capability.Seal(path)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want, _ := capability.Hash(c); !l.Sealed || l.Hash != hash || hash != want {
		t.Errorf("sealed %v with %s, loaded %s, compiled %s", l.Sealed, hash, l.Hash, want)
	}
	if !reflect.DeepEqual(l.Capability.Reentry, c.Reentry) {
		t.Errorf("loaded reentry %+v, compiled %+v", l.Capability.Reentry, c.Reentry)
	}
	again, err := Marshal(l.Capability, res.Notes)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := capability.Parse("again.yaml", again)
	if err != nil || l2.Hash != hash {
		t.Errorf("re-marshalled file: %v, hash %v, want %s", err, l2, hash)
	}
}

// TestReentrySkipsSignOn: steps that enter a secret or a sensitive value
// are the sign-on; a reentry is never proposed among them, even when the
// final screen shows their target.
func TestReentrySkipsSignOn(t *testing.T) {
	t.Parallel()
	user := typeStep("User", "")
	user.Literal, user.Action.Value = "", &domain.ValueExpr{Secret: "corebank_user"}
	pass := typeStep("Password", "hunter2hunter2")
	pass.Node.States.Password = true
	member := typeStep("Member number", "12345")
	search := clickStep("button", "Search")
	search.Postcondition = identityPost()
	tr := traceOf("Sign on and look up member 12345", user, pass, clickStep("button", "Sign on"), clickStep("link", "Members"), member, search, extractStep("Balance", "balance", "$1.00"))
	opts := testOptions()
	opts.FinalScreen = screen(
		domain.Node{Role: "textbox", Name: "User", Frame: "content"},
		domain.Node{Role: "button", Name: "Sign on", Frame: "content"},
		domain.Node{Role: "link", Name: "Members", Frame: "content"},
	)
	res, _ := mustCompile(t, tr, opts)
	if re := res.Capability.Reentry; re == nil || re.Step != "click_members" {
		t.Fatalf("reentry = %+v, want step click_members\nnotes:\n%s", re, strings.Join(res.Notes, "\n"))
	}
}
