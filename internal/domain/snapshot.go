package domain

// Rect is a box in page (CSS pixel) coordinates.
type Rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// Empty reports whether the box has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Contains reports whether the point lies inside the box.
func (r Rect) Contains(x, y float64) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.W && y < r.Y+r.H
}

// Center returns the box's centre.
func (r Rect) Center() (float64, float64) { return r.X + r.W/2, r.Y + r.H/2 }

// NodeStates are the accessibility states cua reads.
type NodeStates struct {
	Focused   bool `json:"focused,omitempty"`
	Focusable bool `json:"focusable,omitempty"`
	Disabled  bool `json:"disabled,omitempty"`
	Editable  bool `json:"editable,omitempty"`
	Checked   bool `json:"checked,omitempty"`
	Selected  bool `json:"selected,omitempty"`
	Expanded  bool `json:"expanded,omitempty"`
	Hidden    bool `json:"hidden,omitempty"`
	Modal     bool `json:"modal,omitempty"`
	Password  bool `json:"password,omitempty"`
}

// Node is one accessible element of a snapshot. Nodes live in
// UiSnapshot.Nodes and refer to each other by index.
type Node struct {
	// Index is the node's position in UiSnapshot.Nodes.
	Index int `json:"index"`
	// Path is a stable structural id: the frame path and the child indices
	// from the frame's root ("content/0.3.1").
	Path string `json:"path"`
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	// Value is the current value of an editable or valued control.
	Value       string     `json:"value,omitempty"`
	Description string     `json:"description,omitempty"`
	States      NodeStates `json:"states"`
	Bounds      Rect       `json:"bounds"`
	// Frame is the path of frame names the node is in ("" for the top
	// document, "content", "outer/inner").
	Frame string `json:"frame,omitempty"`
	// Region is the name of the nearest preceding heading or enclosing
	// landmark.
	Region      string `json:"region,omitempty"`
	Parent      int    `json:"parent"`
	Children    []int  `json:"children,omitempty"`
	Depth       int    `json:"depth"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// CSS is a cached, non-semantic hint (id or class based) captured with the
	// node; it is only ever used to confirm a semantic match.
	CSS string `json:"css,omitempty"`
	// Ref is the surface's handle for acting on the node (for the browser, the
	// frame-qualified backend DOM node id). Opaque outside the surface.
	Ref string `json:"ref,omitempty"`
	// Sensitive nodes have their value and box masked in every sink.
	Sensitive bool `json:"sensitive,omitempty"`
}

// Frame is a document in the snapshot.
type Frame struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Title is the owner iframe element's title attribute ("" for the top
	// document or when absent); scope.frame may name a frame by it.
	Title string `json:"title,omitempty"`
	// Path is the frame-name path from the top document.
	Path       string `json:"path"`
	URL        string `json:"url"`
	HTTPStatus int    `json:"http_status,omitempty"`
	// Root is the index of the frame's root node in UiSnapshot.Nodes.
	Root int `json:"root"`
}

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload) the
// page has open.
type Dialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// UiSnapshot is one observation of a surface.
type UiSnapshot struct {
	// Seq increases with every observation of one session.
	Seq    uint64  `json:"seq"`
	URL    string  `json:"url"`
	Title  string  `json:"title,omitempty"`
	Nodes  []Node  `json:"nodes"`
	Frames []Frame `json:"frames,omitempty"`
	// HTTPStatus is the status of the most recent document response in any
	// frame that was not 2xx/3xx, else of the top document.
	HTTPStatus int     `json:"http_status,omitempty"`
	Dialog     *Dialog `json:"dialog,omitempty"`
	// PostBacked is true when the top document was loaded by a POST (a
	// submitted form): reloading it would send the form again.
	PostBacked bool `json:"post_backed,omitempty"`
	// Fingerprint is a structural hash of the snapshot (roles, names, tree
	// shape; not values).
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Frame returns the frame with the given path, or nil.
func (s *UiSnapshot) Frame(path string) *Frame {
	for i := range s.Frames {
		if s.Frames[i].Path == path {
			return &s.Frames[i]
		}
	}
	return nil
}

// StatusIn reports whether any frame's document answered one of codes.
func (s *UiSnapshot) StatusIn(codes []int) bool {
	for _, c := range codes {
		if s.HTTPStatus == c {
			return true
		}
		for _, f := range s.Frames {
			if f.HTTPStatus == c {
				return true
			}
		}
	}
	return false
}
