package replay

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

func TestHumanDelta(t *testing.T) {
	t.Parallel()
	node := func(ref, role, name, value string) domain.Node {
		return domain.Node{Ref: ref, Role: role, Name: name, Value: value, Frame: "content"}
	}
	before := &domain.UiSnapshot{URL: "http://127.0.0.1/form", Nodes: []domain.Node{
		node("r1", "textbox", "Memo", "old"),
		node("r2", "textbox", "PIN", "1234"),
		node("r3", "checkbox", "Urgent", ""),
		node("r4", "button", "Cancel", ""),
		node("r5", "generic", "", ""), // no name, no value: not counted
	}}
	before.Nodes[1].Sensitive = true
	after := &domain.UiSnapshot{URL: "http://127.0.0.1/form?step=2", Nodes: []domain.Node{
		node("r1", "textbox", "Memo", "new"),
		node("r2", "textbox", "PIN", "9876"),
		node("r3", "checkbox", "Urgent", ""),
		node("r6", "button", "Confirm", ""),
	}}
	after.Nodes[2].States.Checked = true
	d := humanDelta(before, after)
	want := evidence.HumanDelta{
		URLBefore: "http://127.0.0.1/form", URLAfter: "http://127.0.0.1/form?step=2",
		Added:   []string{`button "Confirm" in frame content`},
		Removed: []string{`button "Cancel" in frame content`},
		Edited: []evidence.ValueEdit{
			{Node: `textbox "Memo" in frame content`, Before: "old", After: "new"},
			{Node: `textbox "PIN" in frame content`, Sensitive: true},
			{Node: `checkbox "Urgent" in frame content`, Before: "unchecked", After: "checked"},
		},
		AddedTotal: 1, RemovedTotal: 1, EditedTotal: 3,
	}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("delta\n got %+v\nwant %+v", d, want)
	}

	// A whole new page: lists are capped, totals are not; a node without a
	// Ref is matched by where it is and what it is called.
	var many []domain.Node
	for i := range evidence.MaxDeltaNodes + 5 {
		many = append(many, domain.Node{Role: "cell", Name: fmt.Sprint(i), Path: fmt.Sprint(i)})
	}
	d = humanDelta(&domain.UiSnapshot{Nodes: []domain.Node{{Role: "heading", Name: "Same", Path: "0"}}},
		&domain.UiSnapshot{Nodes: append([]domain.Node{{Role: "heading", Name: "Same", Path: "0"}}, many...)})
	if len(d.Added) != evidence.MaxDeltaNodes || d.AddedTotal != evidence.MaxDeltaNodes+5 || d.RemovedTotal != 0 ||
		slices.Contains(d.Added, `heading "Same"`) {
		t.Errorf("capped delta = %d listed, %d total, %d removed: %q", len(d.Added), d.AddedTotal, d.RemovedTotal, d.Added)
	}
	if d := humanDelta(nil, after); d.AddedTotal != 0 || d.Added == nil {
		t.Errorf("no before screen: %+v, want an empty delta with empty lists", d)
	}
}
