package browser

import (
	"fmt"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestDbgDump(t *testing.T) {
	srv := server(t)
	e := newEnv(t, srv)
	snap := e.load(t, "/frames.html", "Frames")
	snap = e.waitFor(t, "x", func(s *domain.UiSnapshot) bool { return len(s.Frames) == 3 && s.Nodes[s.Frames[2].Root].Children != nil })
	for _, n := range snap.Nodes {
		fmt.Printf("%-3d p=%-3d %-14s %-12q %-16s frame=%-8s css=%-12s ref=%.20s.. b=%v st=%+v\n", n.Index, n.Parent, n.Path, n.Name, n.Role, n.Frame, n.CSS, n.Ref, n.Bounds, n.States)
	}
	fmt.Printf("%+v\n", snap.Frames)
	snap = e.load(t, "/main.html", "Conformance")
	for _, n := range snap.Nodes {
		fmt.Printf("%-3d p=%-3d %-14s %-12q %-16s val=%q css=%-12s b=%v\n", n.Index, n.Parent, n.Path, n.Name, n.Role, n.Value, n.CSS, n.Bounds)
	}
	fmt.Println(snap.Title, snap.URL, snap.HTTPStatus)
}
