package heal

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/targeting"
)

// searchScreen is the Member Search form with the given button names in
// frame content.
func searchScreen(buttons ...string) *domain.UiSnapshot {
	s := &domain.UiSnapshot{URL: "http://127.0.0.1/content/search"}
	add := func(role, name string) {
		s.Nodes = append(s.Nodes, domain.Node{Index: len(s.Nodes), Path: "content/0." + string(rune('0'+len(s.Nodes))), Role: role, Name: name, Frame: "content"})
	}
	add("textbox", "Member number")
	for _, b := range buttons {
		add("button", b)
	}
	return s
}

func halt(t *testing.T, s *domain.UiSnapshot, code domain.FailureCode) replay.Halt {
	l := loadLookup(t)
	return replay.Halt{RunID: "run-1", Capability: l, Step: "search", Target: *l.Capability.Step("search").Target,
		Code: code, Snapshot: s, StepNumber: 3, Node: -1}
}

// TestDriftProposesTheResolvedName: a target that resolves on a weaker
// rung than recorded (a case change: semantic_normalized, recorded
// semantic_exact) proposes the name the node carries now; one whose node
// already carries its name proposes nothing.
func TestDriftProposesTheResolvedName(t *testing.T) {
	h := halt(t, searchScreen("SEARCH", "Clear"), "")
	rs, err := targeting.Resolve(h.Snapshot, h.Target)
	if err != nil || !rs.Drifted {
		t.Fatalf("resolve: %v drifted=%v", err, rs.Drifted)
	}
	h.Node, h.Strategy = rs.Node, rs.Strategy
	c, why, ok := drifted(h)
	if !ok || c.Name != "SEARCH" || !strings.Contains(why, "semantic_normalized") {
		t.Fatalf("drifted = %q %v %q", c.Name, ok, why)
	}
	h.Snapshot.Nodes[rs.Node].Name = "Search"
	if _, why, ok := drifted(h); ok || !strings.Contains(why, "already carries") {
		t.Fatalf("same name: ok=%v %q", ok, why)
	}
}

// TestFind: a renamed button is the one candidate once Clear is set
// aside; two buttons carrying the step's own name, or two unknown ones,
// are none.
func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		buttons []string
		want    string // "" when no candidate
		why     string
	}{
		{"renamed", []string{"Look up", "Clear"}, "Look up", "the only visible"},
		{"duplicated label", []string{"Search", "Search", "Clear"}, "", "duplicated label"},
		{"two unknown buttons", []string{"Look up", "Find", "Clear"}, "", "not unique"},
		{"only a reset", []string{"Clear"}, "", "no node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, why, _, ok := Find(halt(t, searchScreen(tt.buttons...), domain.CodeTargetNotFound))
			if ok != (tt.want != "") || c.Name != tt.want || !strings.Contains(why, tt.why) {
				t.Fatalf("Find = %q ok=%v why %q; want %q (%q)", c.Name, ok, why, tt.want, tt.why)
			}
		})
	}
}

// TestServiceLifecycle on a real SQLite store: a halt proposes once (a
// second identical halt writes nothing), approve needs a passing eval and
// a principal, the canary passes and promotes, a failing run reverts and
// a rollback of a reverted proposal is refused.
func TestServiceLifecycle(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := catalog.New(catalog.Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"corebank.auth.sign_on.yaml", "memberdesk.savings_balance.yaml"} {
		if _, err := cat.AddFile(ctx, filepath.Join("..", "..", "examples", "capabilities", f)); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(db, cat, nil, nil)
	h := halt(t, searchScreen("Look up", "Clear"), domain.CodeTargetNotFound)
	p, _, err := svc.Propose(ctx, h)
	if err != nil || p == nil || p.Version != "1.2.1" || p.State != StateProposed {
		t.Fatalf("Propose: %v %+v", err, p)
	}
	if again, why, err := svc.Propose(ctx, h); err != nil || again.ID != p.ID || !strings.Contains(why, "already proposed") {
		t.Fatalf("second halt: %v %v %q", err, again, why)
	}
	if _, err := svc.Approve(ctx, p.ID, "alice", 2); !errors.Is(err, ErrState) {
		t.Fatalf("approve before eval: %v, want ErrState", err)
	}
	if _, err := svc.RecordEval(ctx, p.ID, Eval{By: "alice", Passed: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Approve(ctx, p.ID, "Not A Principal", 2); err == nil || !strings.Contains(err.Error(), "--as") {
		t.Fatalf("approve by a malformed principal: %v", err)
	}
	if p, err = svc.Approve(ctx, p.ID, "alice", 2); err != nil || p.Approval.OldHash != h.Capability.Hash || p.Approval.NewHash != p.Hash {
		t.Fatalf("approve: %v %+v", err, p.Approval)
	}
	ref, err := svc.ResolveRef(ctx, "memberdesk.savings_balance@active")
	if err != nil || ref != "memberdesk.savings_balance@1.2.1" {
		t.Fatalf("active: %q %v", ref, err)
	}
	rec := func(id string, st domain.RunStatus) *domain.RunRecord {
		return &domain.RunRecord{RunID: id, Capability: p.Ref(), ContentHash: p.Hash, Status: st}
	}
	for i, want := range []string{"canary run 1 of 2", "is promoted"} {
		if msg, err := svc.Observe(ctx, rec("ok-"+string(rune('a'+i)), domain.StatusSuccess)); err != nil || !strings.Contains(msg, want) {
			t.Fatalf("canary run %d: %q %v", i+1, msg, err)
		}
	}
	msg, err := svc.Observe(ctx, rec("bad", domain.StatusNeedsHuman))
	if err != nil || !strings.Contains(msg, "reverted memberdesk.savings_balance@active to 1.2.0") {
		t.Fatalf("failing run: %q %v", msg, err)
	}
	if ref, _ := svc.ResolveRef(ctx, "memberdesk.savings_balance@active"); ref != "memberdesk.savings_balance@1.2.0" {
		t.Fatalf("after the revert: %s", ref)
	}
	if _, _, err := svc.Rollback(ctx, p.ID, "alice"); !errors.Is(err, ErrState) {
		t.Fatalf("rollback of a reverted proposal: %v", err)
	}
	hist, err := svc.History(ctx, p.ID)
	if err != nil || len(hist) != 6 || hist[len(hist)-1].To != StateReverted {
		t.Fatalf("history: %v %+v", err, hist)
	}
}
