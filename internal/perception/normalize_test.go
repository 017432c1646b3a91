package perception

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenNode is the part of a normalised node a golden file records.
type goldenNode struct {
	Index       int    `json:"index"`
	Path        string `json:"path"`
	Role        string `json:"role"`
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	Frame       string `json:"frame,omitempty"`
	Region      string `json:"region,omitempty"`
	Parent      int    `json:"parent"`
	Children    []int  `json:"children,omitempty"`
	Depth       int    `json:"depth"`
	Fingerprint string `json:"fingerprint"`
}

type golden struct {
	Fingerprint string         `json:"fingerprint"`
	Frames      []domain.Frame `json:"frames,omitempty"`
	Nodes       []goldenNode   `json:"nodes"`
}

func project(s *domain.UiSnapshot) golden {
	g := golden{Fingerprint: s.Fingerprint, Frames: s.Frames}
	for _, n := range s.Nodes {
		g.Nodes = append(g.Nodes, goldenNode{
			Index: n.Index, Path: n.Path, Role: n.Role, Name: n.Name, Value: n.Value,
			Frame: n.Frame, Region: n.Region, Parent: n.Parent, Children: n.Children,
			Depth: n.Depth, Fingerprint: n.Fingerprint,
		})
	}
	return g
}

func loadRaw(tb testing.TB, name string) *domain.UiSnapshot {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	var s domain.UiSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return &s
}

func TestNormalizeGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.json") {
			continue
		}
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			t.Parallel()
			s := Normalize(loadRaw(t, name))
			checkTree(t, s)
			got, err := json.MarshalIndent(project(s), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			gf := strings.TrimSuffix(f, ".json") + ".golden.json"
			if *update {
				if err := os.WriteFile(gf, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gf)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
			}
		})
	}
}

// byName returns the first node with the given role and name.
func byName(tb testing.TB, s *domain.UiSnapshot, role, name string) *domain.Node {
	tb.Helper()
	for i := range s.Nodes {
		if s.Nodes[i].Role == role && s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	tb.Fatalf("no %s %q", role, name)
	return nil
}

func TestNormalizeAliasing(t *testing.T) {
	t.Parallel()
	s := Normalize(loadRaw(t, "aliasing.json"))
	tests := []struct {
		name string
		role string
	}{
		{"Aliases", "document"},
		{"Layout cell", "cell"},
		{"Grid cell", "cell"},
		{"Header", "columnheader"},
		{"State", "combobox"},
		{"Ohio", "option"},
		{"Find", "searchbox"},
		{"Logo", "img"},
		{"Embedded", "iframe"},
		{"Named presentation", "none"},
		{"Named section", "region"},
		{"Unknown role", "customthing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byName(t, s, tt.role, tt.name)
		})
	}
	for _, n := range s.Nodes {
		switch n.Role {
		case "table", "row", "listbox", "label", "text", "heading", "document", "cell", "columnheader",
			"combobox", "option", "searchbox", "img", "iframe", "none", "region", "customthing":
		default:
			t.Errorf("unexpected role %q at %s", n.Role, n.Path)
		}
	}
}

func TestCanonicalRole(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{"gridcell", "cell"},
		{"searchbox", "searchbox"},
		{"image", "img"},
		{"presentation", "none"},
		{"button", "button"},
		{"AlertDialog", "alertdialog"},
		// Platform spellings are the adapter's to map: perception only
		// folds case (surface/browser maps "RootWebArea" to "document").
		{"RootWebArea", "rootwebarea"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := CanonicalRole(tt.raw); got != tt.want {
			t.Errorf("CanonicalRole(%q) = %q, want %q", tt.raw, got, tt.want)
		}
		if got := CanonicalRole(tt.want); got != tt.want {
			t.Errorf("CanonicalRole(%q) = %q: not idempotent", tt.want, got)
		}
	}
}

func TestNormalizeDropAndReparent(t *testing.T) {
	t.Parallel()
	s := Normalize(loadRaw(t, "dropping.json"))
	root := &s.Nodes[0]
	tests := []struct {
		name       string
		role, node string
		parent     string // name of the expected parent ("" = the root)
		parentRole string
	}{
		{"label lifted out of two unnamed generics", "label", "", "Member search", "document"},
		{"textbox name cleaned", "textbox", "Member ID", "Member search", "document"},
		{"NBSP text cleaned", "text", "Member ID", "", "label"},
		{"button lifted out of none", "button", "Search", "Member search", "document"},
		{"focusable generic kept", "generic", "", "Member search", "document"},
		{"named generic kept", "generic", "Named generic", "Member search", "document"},
		{"paragraph text", "text", "Line one", "", "paragraph"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := byName(t, s, tt.role, tt.node)
			if n.Parent < 0 {
				t.Fatalf("%s has no parent", n.Path)
			}
			p := &s.Nodes[n.Parent]
			if p.Role != tt.parentRole || p.Name != tt.parent {
				t.Errorf("parent of %s %q = %s %q, want %s %q", tt.role, tt.node, p.Role, p.Name, tt.parentRole, tt.parent)
			}
		})
	}
	for _, n := range s.Nodes {
		switch {
		case n.Role == "text" && n.Name == "" && n.Value == "":
			t.Errorf("empty text kept at %s", n.Path)
		case n.Name == "Delete":
			t.Errorf("hidden %s %q kept", n.Role, n.Name)
		case n.Role == "generic" && n.Name == "" && n.Value == "" && !n.States.Focusable:
			t.Errorf("unnamed generic kept at %s", n.Path)
		}
	}
	if v := byName(t, s, "generic", ""); v.Value != "" && v.Value != "42" {
		t.Errorf("generic value = %q", v.Value)
	}
	if len(root.Children) != 7 {
		t.Errorf("root children = %v, want 7 lifted children", root.Children)
	}
}

func TestNormalizeRegions(t *testing.T) {
	t.Parallel()
	s := Normalize(loadRaw(t, "regions.json"))
	tests := []struct {
		role, name, region string
	}{
		{"link", "Home", "Primary"},                   // named landmark
		{"navigation", "Primary", "Primary"},          // a landmark is its own region
		{"heading", "Member lookup", "Member lookup"}, // a heading starts its own section
		{"button", "Search", "Member lookup"},         // unnamed main: preceding heading
		{"button", "Open", "Savings"},                 // unnamed form does not count
		{"heading", "Checking", "Transfer funds"},     // named form beats the heading
		{"region", "Limits", "Limits"},                // nearest landmark wins
		{"button", "Confirm", "Confirm transfer"},     // dialog
		{"button", "Log out", "Checking"},             // nearest preceding heading in document order
		{"document", "Regions", ""},
	}
	for _, tt := range tests {
		t.Run(tt.role+" "+tt.name, func(t *testing.T) {
			if got := byName(t, s, tt.role, tt.name).Region; got != tt.region {
				t.Errorf("region = %q, want %q", got, tt.region)
			}
		})
	}
}

func TestNormalizeFrames(t *testing.T) {
	t.Parallel()
	raw := loadRaw(t, "frames.json")
	s := Normalize(raw)
	tests := []struct {
		role, name, frame, path string
		depth                   int
	}{
		{"document", "Desk", "", "/0", 0},
		{"iframe", "Navigation", "", "/0.1", 1},
		{"alertdialog", "Close the account?", "", "/1", 0},
		{"button", "OK", "", "/1.0", 1},
		{"document", "Navigation", "nav", "nav/0", 0},               // linked under its Iframe
		{"link", "Accounts", "nav", "nav/0.0.0", 2},                 // inside a named navigation
		{"document", "Content", "content", "content/0", 0},          // Parent set, not listed
		{"button", "Refresh", "content", "content/0.1", 1},          // unnamed generic dropped
		{"button", "Help", "content/inner", "content/inner/0.0", 1}, // parentless
		{"link", "Offer", "ads", "ads/0.0", 1},                      // a frame nobody listed
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := byName(t, s, tt.role, tt.name)
			if n.Frame != tt.frame || n.Path != tt.path || n.Depth != tt.depth {
				t.Errorf("frame, path, depth = %q, %q, %d; want %q, %q, %d", n.Frame, n.Path, n.Depth, tt.frame, tt.path, tt.depth)
			}
		})
	}
	if iframe := byName(t, s, "iframe", "Navigation"); len(iframe.Children) != 0 {
		t.Errorf("iframe keeps children %v", iframe.Children)
	}
	for _, f := range s.Frames {
		if f.Root < 0 || s.Nodes[f.Root].Role != "document" || s.Nodes[f.Root].Frame != f.Path || s.Nodes[f.Root].Parent != -1 {
			t.Errorf("frame %q root %d is not its document", f.Path, f.Root)
		}
	}
	if s.Dialog == nil || s.Dialog == raw.Dialog || *s.Dialog != *raw.Dialog {
		t.Errorf("dialog not copied: %+v", s.Dialog)
	}

	// Linking a frame under its Iframe node or not changes nothing.
	unlinked := cloneRaw(raw)
	unlinked.Nodes[3].Children = nil
	unlinked.Nodes[6].Parent = -1
	linked := cloneRaw(raw)
	linked.Nodes[4].Children = []int{10}
	linked.Nodes[16].Parent = 15
	linked.Nodes[15].Children = []int{16}
	for name, variant := range map[string]*domain.UiSnapshot{"unlinked": unlinked, "linked": linked} {
		if got := Normalize(variant); !reflect.DeepEqual(project(got), project(s)) {
			t.Errorf("%s variant normalises differently:\n%+v\nwant\n%+v", name, project(got), project(s))
		}
	}
}

func TestNormalizePathsStable(t *testing.T) {
	t.Parallel()
	raw := Synthetic(2000, 7)
	a := Normalize(raw)
	changed := cloneRaw(raw)
	for i := range changed.Nodes {
		if changed.Nodes[i].Role == "textbox" {
			changed.Nodes[i].Value = "changed " + changed.Nodes[i].Value
		}
	}
	b := Normalize(changed)
	if len(a.Nodes) != len(b.Nodes) {
		t.Fatalf("node count %d != %d", len(a.Nodes), len(b.Nodes))
	}
	for i := range a.Nodes {
		if a.Nodes[i].Path != b.Nodes[i].Path || a.Nodes[i].Fingerprint != b.Nodes[i].Fingerprint {
			t.Fatalf("node %d: path/fingerprint %s/%s != %s/%s", i, a.Nodes[i].Path, a.Nodes[i].Fingerprint, b.Nodes[i].Path, b.Nodes[i].Fingerprint)
		}
	}
	if a.Fingerprint != b.Fingerprint {
		t.Errorf("snapshot fingerprint changed with values only")
	}
	// Same structure, another run: identical.
	if c := Normalize(Synthetic(2000, 7)); !reflect.DeepEqual(project(a), project(c)) {
		t.Errorf("normalising the same input twice differs")
	}
}

func TestFingerprints(t *testing.T) {
	t.Parallel()
	base := loadRaw(t, "dropping.json")
	const textbox, search = 5, 15 // the textbox "Member ID" and the button "Search"
	tests := []struct {
		name      string
		change    func(s *domain.UiSnapshot)
		sameSnap  bool
		sameNodes bool
	}{
		{"value only", func(s *domain.UiSnapshot) { s.Nodes[textbox].Value = "12345" }, true, true},
		{"states and bounds", func(s *domain.UiSnapshot) {
			s.Nodes[textbox].States.Focused = true
			s.Nodes[textbox].Bounds = domain.Rect{X: 1, Y: 2, W: 3, H: 4}
			s.Nodes[textbox].Ref = "other"
		}, true, true},
		{"case and punctuation of a name", func(s *domain.UiSnapshot) { s.Nodes[search].Name = "search!" }, true, true},
		{"name", func(s *domain.UiSnapshot) { s.Nodes[search].Name = "Find member" }, false, false},
		{"role", func(s *domain.UiSnapshot) { s.Nodes[search].Role = "link" }, false, false},
	}
	a := Normalize(base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := cloneRaw(base)
			tt.change(raw)
			b := Normalize(raw)
			if (a.Fingerprint == b.Fingerprint) != tt.sameSnap {
				t.Errorf("snapshot fingerprint equal = %v, want %v", a.Fingerprint == b.Fingerprint, tt.sameSnap)
			}
			same := true
			for i := range a.Nodes {
				if a.Nodes[i].Fingerprint != b.Nodes[i].Fingerprint {
					same = false
				}
			}
			if same != tt.sameNodes {
				t.Errorf("node fingerprints equal = %v, want %v", same, tt.sameNodes)
			}
		})
	}
	for _, n := range a.Nodes {
		if len(n.Fingerprint) != 16 {
			t.Errorf("fingerprint %q", n.Fingerprint)
		}
	}
	if len(a.Fingerprint) != 32 {
		t.Errorf("snapshot fingerprint %q", a.Fingerprint)
	}
}

func TestNormalizeDoesNotMutate(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"aliasing.json", "dropping.json", "frames.json", "regions.json"} {
		raw := loadRaw(t, f)
		before := cloneRaw(raw)
		s := Normalize(raw)
		if !reflect.DeepEqual(raw, before) {
			t.Errorf("%s: Normalize changed its input", f)
		}
		// Appending to a result's Children never writes into a neighbour's.
		for i := range s.Nodes {
			if c := s.Nodes[i].Children; len(c) != cap(c) {
				t.Errorf("%s: node %d children have spare capacity", f, i)
			}
		}
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	t.Parallel()
	for _, raw := range []*domain.UiSnapshot{loadRaw(t, "frames.json"), loadRaw(t, "regions.json"), Synthetic(3000, 3)} {
		once := Normalize(raw)
		twice := Normalize(once)
		if !reflect.DeepEqual(project(once), project(twice)) {
			t.Errorf("Normalize is not idempotent on %s", raw.URL)
		}
	}
}

func TestNormalizeMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []domain.Node
		want  int // kept nodes
	}{
		{"empty", nil, 0},
		{"self parent", []domain.Node{{Role: "button", Name: "A", Parent: 0, Children: []int{0}}}, 1},
		{"cycle without root", []domain.Node{
			{Role: "button", Name: "A", Parent: 1, Children: []int{1}},
			{Role: "button", Name: "B", Parent: 0, Children: []int{0}},
		}, 2},
		{"out of range", []domain.Node{
			{Role: "document", Name: "D", Parent: 7, Children: []int{-3, 9, 1}},
			{Role: "button", Name: "B", Parent: 0},
		}, 2},
		{"listed twice", []domain.Node{
			{Role: "document", Name: "D", Parent: -1, Children: []int{1, 2}},
			{Role: "list", Name: "L", Parent: 0, Children: []int{2}},
			{Role: "button", Name: "B", Parent: 1},
		}, 3},
		{"hidden root kept", []domain.Node{{Role: "generic", Parent: -1, States: domain.NodeStates{Hidden: true}}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := &domain.UiSnapshot{Nodes: tt.nodes, Frames: []domain.Frame{{Root: 42}}}
			s := Normalize(raw)
			checkTree(t, s)
			if len(s.Nodes) != tt.want {
				t.Errorf("kept %d nodes, want %d", len(s.Nodes), tt.want)
			}
			if s.Frames[0].Root != -1 {
				t.Errorf("invalid frame root mapped to %d", s.Frames[0].Root)
			}
		})
	}
	if Normalize(nil) != nil {
		t.Error("Normalize(nil) != nil")
	}
}

func TestSynthetic(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 100, 1000, 10000} {
		raw := Synthetic(n, int64(n))
		if len(raw.Nodes) < n || len(raw.Nodes) > n+200 {
			t.Errorf("Synthetic(%d) has %d nodes", n, len(raw.Nodes))
		}
		if !reflect.DeepEqual(raw, Synthetic(n, int64(n))) {
			t.Errorf("Synthetic(%d) is not deterministic", n)
		}
		s := Normalize(raw)
		checkTree(t, s)
		byName(t, s, "button", "Submit final")
	}
}

// checkTree verifies the structural contract of a normalised snapshot.
func checkTree(tb testing.TB, s *domain.UiSnapshot) {
	tb.Helper()
	paths := make(map[string]int, len(s.Nodes))
	for i, n := range s.Nodes {
		if n.Index != i {
			tb.Fatalf("node %d has Index %d", i, n.Index)
		}
		if j, dup := paths[n.Path]; dup {
			tb.Fatalf("nodes %d and %d share path %q", j, i, n.Path)
		}
		paths[n.Path] = i
		if !strings.HasPrefix(n.Path, n.Frame+"/") {
			tb.Fatalf("node %d path %q outside frame %q", i, n.Path, n.Frame)
		}
		if n.Parent == -1 {
			if n.Depth != 0 {
				tb.Fatalf("root %d has depth %d", i, n.Depth)
			}
		} else {
			if n.Parent < 0 || n.Parent >= i {
				tb.Fatalf("node %d parent %d is not an earlier node", i, n.Parent)
			}
			p := s.Nodes[n.Parent]
			if n.Depth != p.Depth+1 || n.Frame != p.Frame {
				tb.Fatalf("node %d depth/frame %d/%q under %d/%q", i, n.Depth, n.Frame, p.Depth, p.Frame)
			}
			if !strings.HasPrefix(n.Path, p.Path+".") {
				tb.Fatalf("node %d path %q not under %q", i, n.Path, p.Path)
			}
		}
		next := i + 1
		for k, c := range n.Children {
			if s.Nodes[c].Parent != i {
				tb.Fatalf("child %d of %d has parent %d", c, i, s.Nodes[c].Parent)
			}
			if c != next && k == 0 {
				tb.Fatalf("first child of %d is %d, not the next node", i, c)
			}
			if k > 0 && c <= n.Children[k-1] {
				tb.Fatalf("children of %d out of order: %v", i, n.Children)
			}
		}
	}
}

func cloneRaw(s *domain.UiSnapshot) *domain.UiSnapshot {
	c := *s
	c.Nodes = append([]domain.Node(nil), s.Nodes...)
	for i := range c.Nodes {
		if ch := s.Nodes[i].Children; ch != nil {
			c.Nodes[i].Children = append(make([]int, 0, len(ch)), ch...)
		}
	}
	if s.Frames != nil {
		c.Frames = append([]domain.Frame(nil), s.Frames...)
	}
	if s.Dialog != nil {
		d := *s.Dialog
		c.Dialog = &d
	}
	return &c
}
