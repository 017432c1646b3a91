package record

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

const base = "http://127.0.0.1:8811"

// screen builds a snapshot: each node is role, name and parent index;
// nodes sit in a column, 30 px apart.
func screen(url string, nodes ...domain.Node) *domain.UiSnapshot {
	s := &domain.UiSnapshot{URL: url}
	for i, n := range nodes {
		n.Index = i
		n.Bounds = domain.Rect{X: 10, Y: float64(10 + 30*i), W: 200, H: 20}
		if n.Parent >= 0 && n.Parent < i {
			s.Nodes[n.Parent].Children = append(s.Nodes[n.Parent].Children, i)
			n.Depth = s.Nodes[n.Parent].Depth + 1
		}
		s.Nodes = append(s.Nodes, n)
	}
	return s
}

func node(role, name string, parent int) domain.Node {
	return domain.Node{Role: role, Name: name, Parent: parent}
}

// searchScreen is a search form: member number, password, Search (with
// its text), and, when found, the member's heading.
func searchScreen(found bool) *domain.UiSnapshot {
	pw := node("textbox", "Password", 0)
	pw.States.Password = true
	nodes := []domain.Node{node("RootWebArea", "Search", -1), node("textbox", "Member number", 0), pw,
		node("button", "Search", 0), node("text", "Search", 3)}
	if found {
		nodes = append(nodes, node("heading", "Member 12345", 0), node("text", "Member 12345", 5),
			node("status", "", 0), node("text", "Member not found", 7))
	}
	return screen(base+"/search", nodes...)
}

func keys(t *testing.T, r *Recording, s *domain.UiSnapshot, field int, ks ...string) {
	t.Helper()
	for _, k := range ks {
		if err := r.Gesture(Gesture{Kind: "key", Key: k, Before: s, Node: field}); err != nil {
			t.Fatal(err)
		}
	}
}

func click(t *testing.T, r *Recording, s *domain.UiSnapshot, n int) {
	t.Helper()
	if err := r.Gesture(Gesture{Kind: "click", Before: s, Node: n}); err != nil {
		t.Fatal(err)
	}
}

// TestGesturesBecomeSemanticSteps: keys typed into one field fold into
// one type step (Backspace edits it), a click that only focused the
// field is dropped, a click on a button's text is the button's, an
// --input value becomes the input, a password becomes a secret reference
// whose value is told to the redactor and is in no trace, summary or
// compiled file.
func TestGesturesBecomeSemanticSteps(t *testing.T) {
	var told []string
	r := NewRecording("Look up a member", base, domain.SurfaceWeb, map[string]string{"member_id": "12345"}, nil)
	r.OnSecret(func(v string) { told = append(told, v) })
	s := searchScreen(false)
	click(t, r, s, 1)
	keys(t, r, s, 1, "1", "2", "3", "X", "Backspace", "4", "5")
	click(t, r, s, 2)
	keys(t, r, s, 2, "h", "u", "s", "h", "-", "9")
	click(t, r, s, 4)
	after := searchScreen(true)
	if err := r.Mark("checkpoint", "", "", after, 6); err != nil {
		t.Fatal(err)
	}
	d, err := r.Demonstration()
	if err != nil {
		t.Fatal(err)
	}
	steps := d.Trace.Steps
	if len(steps) != 3 {
		t.Fatalf("%d steps, want type, type, click: %+v", len(steps), steps)
	}
	if steps[0].Action.Type != domain.ActType || steps[0].Literal != "12345" || d.Trace.Inputs["12345"] != "member_id" {
		t.Errorf("first step %+v, inputs %v: want 12345 typed as member_id", steps[0], d.Trace.Inputs)
	}
	if v := steps[1].Action.Value; v == nil || v.Secret != "password" || steps[1].Literal != "" {
		t.Errorf("the password step's value is %+v, literal %q: want {$secret: password}", v, steps[1].Literal)
	}
	if steps[2].Action.Type != domain.ActClick || steps[2].Target.Role != "button" {
		t.Errorf("the click on the button's text recorded %+v, want the button", steps[2].Target)
	}
	if p := steps[2].Postcondition; p == nil || p.NodeExists == nil || p.NodeExists.Name.Value != "Member 12345" {
		t.Errorf("the click's postcondition is %+v, want the heading that appeared", p)
	}
	if c := d.Trace.Checkpoint; c == nil || c.NodeExists == nil || c.NodeExists.Role != "heading" {
		t.Errorf("checkpoint %+v, want the heading (the mark landed on its text)", c)
	}
	if len(told) != 1 || told[0] != "hush-9" {
		t.Errorf("the redactor was told %q, want the password once", told)
	}
	trace, _ := json.Marshal(d.Trace)
	summary, _ := json.Marshal(r.Summary())
	res, err := Compile(context.Background(), d, CompileOptions{ID: "memberdesk.test_lookup", Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"trace": trace, "summary": summary, "capability": file} {
		if strings.Contains(string(b), "hush-9") {
			t.Errorf("the password is in the %s", what)
		}
	}
	for _, want := range []string{"{$input: member_id}", "{$secret: password}", "source: demonstration"} {
		if !strings.Contains(string(file), want) {
			t.Errorf("the compiled file lacks %q:\n%s", want, file)
		}
	}
}

// TestBranchMarksAnOutcome: a branch pass is not compiled; the value it
// typed into the input's field becomes its eval's input, and the outcome
// marked on it is the text the marked node shows.
func TestBranchMarksAnOutcome(t *testing.T) {
	r := NewRecording("Look up a member", base, domain.SurfaceWeb, map[string]string{"member_id": "12345"},
		map[string]string{"Password": "corebank_password"})
	s := searchScreen(false)
	click(t, r, s, 1)
	keys(t, r, s, 1, "1", "2", "3", "4", "5")
	click(t, r, s, 3)
	if err := r.Mark("output", "Bad Name", "money", searchScreen(true), 6); err == nil {
		t.Error("an output named \"Bad Name\" was marked")
	}
	if err := r.Mark("output", "heading", "colour", searchScreen(true), 6); err == nil {
		t.Error("an output of type colour was marked")
	}
	r.Branch()
	if err := r.Mark("output", "late", "text", searchScreen(true), 6); err == nil {
		t.Error("an output was marked in a branch")
	}
	click(t, r, s, 1)
	keys(t, r, s, 1, "9", "9", "9", "9", "9")
	click(t, r, s, 3)
	if err := r.Mark("outcome", "member_not_found", "", searchScreen(true), 8); err != nil {
		t.Fatal(err)
	}
	d, err := r.Demonstration()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Trace.Steps) != 2 {
		t.Errorf("%d steps compiled, want the main pass's 2", len(d.Trace.Steps))
	}
	if len(d.Branches) != 1 || d.Branches[0].Inputs["member_id"] != "99999" || d.Branches[0].Outcome != "member_not_found" {
		t.Fatalf("branches %+v, want member_id 99999 ending in member_not_found", d.Branches)
	}
	o := d.Trace.Outcome
	if o == nil || o.When.TextPresent == nil || o.When.TextPresent.Text != "Member not found" {
		t.Errorf("outcome %+v, want text_present Member not found", o)
	}
	if _, err := NewRecording("x", base, domain.SurfaceWeb, nil, nil).Demonstration(); err != ErrNothingRecorded {
		t.Errorf("an empty recording: %v, want ErrNothingRecorded", err)
	}
}
