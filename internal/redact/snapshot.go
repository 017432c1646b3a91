package redact

import (
	"slices"

	"github.com/cuahq/cua/internal/domain"
)

// Snapshot returns a redacted deep copy of s, fit to be written as evidence
// (DESIGN invariant 11): every text field is redacted as by String; the
// value of a password field becomes Marker; the value of any other sensitive
// node is masked by shape (MaskShape); and a sensitive node that is neither
// editable nor a parent (a text node that shows a sensitive output) has its
// name masked by shape too, since its name is its content. Bounds, states,
// structure and fingerprints are kept. It returns nil for a nil snapshot.
func (r *Redactor) Snapshot(s *domain.UiSnapshot) *domain.UiSnapshot {
	if s == nil {
		return nil
	}
	out := *s
	out.URL = r.String(s.URL)
	out.Title = r.String(s.Title)
	if s.Dialog != nil {
		d := *s.Dialog
		d.Message = r.String(d.Message)
		out.Dialog = &d
	}
	out.Frames = slices.Clone(s.Frames)
	for i := range out.Frames {
		out.Frames[i].URL = r.String(out.Frames[i].URL)
		out.Frames[i].Name = r.String(out.Frames[i].Name)
	}
	out.Nodes = slices.Clone(s.Nodes)
	for i := range out.Nodes {
		n, orig := &out.Nodes[i], &s.Nodes[i]
		n.Children = slices.Clone(n.Children)
		n.Name = r.String(n.Name)
		n.Value = r.String(n.Value)
		n.Description = r.String(n.Description)
		n.Region = r.String(n.Region)
		switch {
		case n.States.Password:
			n.Value = MaskSensitive("password", n.Value)
		case n.Sensitive:
			n.Value = MaskShape(orig.Value)
			if !n.States.Editable && len(n.Children) == 0 {
				n.Name = MaskShape(orig.Name)
			}
		}
	}
	return &out
}
