package browser

import (
	"slices"
	"testing"

	"github.com/chromedp/cdproto/cdp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// frameIDs returns the frame id of each frame path of snap ("" is the top).
func frameIDs(t *testing.T, snap *domain.UiSnapshot, paths ...string) map[string]cdp.FrameID {
	t.Helper()
	out := make(map[string]cdp.FrameID, len(paths))
	for _, p := range paths {
		for _, f := range snap.Frames {
			if f.Path == p {
				out[p] = cdp.FrameID(f.ID)
			}
		}
		if out[p] == "" {
			t.Fatalf("no frame %q in %+v", p, snap.Frames)
		}
	}
	return out
}

// fetchCounts returns how often each frame's accessibility tree was
// fetched so far.
func (e *env) fetchCounts(ids map[string]cdp.FrameID) map[string]int {
	out := make(map[string]int, len(ids))
	for p, id := range ids {
		out[p] = e.s.ax.fetchCount(id)
	}
	return out
}

// TestAXCacheIsFrameExact: a click that navigates the content frame, and
// then one that changes its DOM, refetch that frame's accessibility tree
// only; the navigation frame and the top document keep their cached
// trees, and the observation after each shows the new content with the
// other frames intact (their nodes, in their frames, at their places).
func TestAXCacheIsFrameExact(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: e.srv.URL + "/t/axframes.html"}, nil, "")
	snap := e.waitFor(t, "both frames", func(s *domain.UiSnapshot) bool {
		_, nav := surfacetest.Find(s, "button", "Open", "nav")
		_, content := surfacetest.Find(s, "heading", "Page 1", "content")
		return nav && content
	})
	ids := frameIDs(t, snap, "", "nav", "content")
	navBefore := find(t, snap, "button", "Open", "nav")
	// A first click in the content frame moves the top document's focus
	// to its iframe (a change of the top's tree); the steps below start
	// from there.
	grow := find(t, snap, "button", "Grow", "content")
	e.must(t, domain.Action{Type: domain.ActClick}, &grow, "")
	snap = e.waitFor(t, "item 1", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "listitem", "", "content")
		return ok
	})
	steps := []struct {
		name, role, node, want string
	}{
		{name: "a click navigates the content frame", role: "link", node: "Next page", want: "Page 2"},
		{name: "a click changes the content frame's DOM", role: "button", node: "Grow", want: "Item 1"},
	}
	for _, st := range steps {
		for range 2 { // every tree cached, every change reported
			if _, err := e.s.Observe(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
		before := e.fetchCounts(ids)
		n := find(t, snap, st.role, st.node, "content")
		e.must(t, domain.Action{Type: domain.ActClick}, &n, "")
		snap = e.waitFor(t, st.want, func(s *domain.UiSnapshot) bool {
			return slices.ContainsFunc(s.Nodes, func(n domain.Node) bool { return n.Frame == "content" && n.Name == st.want })
		})
		after := e.fetchCounts(ids)
		t.Logf("%s: accessibility fetches per frame before %v, after %v", st.name, before, after)
		if after["content"] == before["content"] {
			t.Errorf("%s: the content frame's tree was not fetched again (%d fetches)", st.name, after["content"])
		}
		for _, p := range []string{"", "nav"} {
			if after[p] != before[p] {
				t.Errorf("%s: frame %q fetched %d more times, want 0 (only the content frame changed)", st.name, p, after[p]-before[p])
			}
		}
		navAfter := find(t, snap, "button", "Open", "nav")
		if navAfter.Ref != navBefore.Ref || !near(navAfter.Bounds.X, navBefore.Bounds.X) || !near(navAfter.Bounds.Y, navBefore.Bounds.Y) {
			t.Errorf("%s: nav button = %s %+v, want %s %+v", st.name, navAfter.Ref, navAfter.Bounds, navBefore.Ref, navBefore.Bounds)
		}
		if _, ok := surfacetest.Find(snap, "heading", "Frames", ""); !ok {
			t.Errorf("%s: the top document lost its heading:\n%s", st.name, surfacetest.Dump(snap))
		}
	}
	if _, ok := surfacetest.Find(snap, "heading", "Page 1", "content"); ok {
		t.Errorf("the content frame still shows its first document:\n%s", surfacetest.Dump(snap))
	}
}
