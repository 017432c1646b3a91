// Package desktopsim is a desktop-like surface adapter over a simulated
// AT-SPI application ([Toolkit]): it proves that an adapter whose platform
// has its own role names ("push button", "text", "combo box", "document
// frame") can fill the surface port by mapping them to domain's canonical
// roles inside itself, and pass surfacetest's conformance suite with no
// change to any other package.
//
// It owns the AT-SPI → canonical role table ([atspiRoles]) and nothing
// else: behaviour, sequencing, change tracking and refusals come from
// [sim.Surface]. It must never leak an AT-SPI role name into a snapshot,
// and never be imported by engine code (it is a test adapter).
package desktopsim

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

// atspiRoles maps AT-SPI role names to canonical roles. A role not listed
// is a container with no canonical equivalent: [domain.RoleGeneric].
var atspiRoles = map[string]string{
	"document frame": domain.RoleDocument,
	"document web":   domain.RoleDocument,
	"internal frame": domain.RoleIframe,
	"heading":        domain.RoleHeading,
	"label":          domain.RoleText,
	"static":         domain.RoleText,
	"text":           domain.RoleTextbox, // an entry, not static text
	"password text":  domain.RoleTextbox,
	"entry":          domain.RoleTextbox,
	"combo box":      domain.RoleCombobox,
	"list item":      domain.RoleOption,
	"menu item":      domain.RoleMenuItem,
	"push button":    domain.RoleButton,
	"toggle button":  domain.RoleButton,
	"check box":      domain.RoleCheckbox,
	"radio button":   domain.RoleRadio,
	"page tab":       domain.RoleTab,
	"link":           domain.RoleLink,
	"status bar":     domain.RoleStatus,
	"alert":          domain.RoleAlertDialog,
	"dialog":         domain.RoleDialog,
	"table":          domain.RoleTable,
	"table row":      domain.RoleRow,
	"table cell":     domain.RoleCell,
	"panel":          domain.RoleGeneric,
	"filler":         domain.RoleGeneric,
}

// Role returns the canonical role of an AT-SPI role name.
func Role(atspi string) string {
	if c, ok := atspiRoles[atspi]; ok {
		return c
	}
	return domain.RoleGeneric
}

// Surface is the desktop adapter: a [sim.Surface] over the toolkit, seen
// through the role mapping. Like sim.Surface it is safe for concurrent use.
type Surface struct {
	*sim.Surface
	toolkit *Toolkit
}

var _ surface.Surface = (*Surface)(nil)

// New returns an adapter on a fresh toolkit application.
func New() *Surface {
	k := NewToolkit()
	return &Surface{Surface: sim.New(mapped{k}), toolkit: k}
}

// URL returns the address of a fixture page.
func (s *Surface) URL(page string) string { return s.toolkit.URL(page) }

// mapped is the toolkit as the port sees it: canonical roles.
type mapped struct{ k *Toolkit }

func (m mapped) Render() *domain.UiSnapshot {
	snap := m.k.Accessible()
	for i := range snap.Nodes {
		snap.Nodes[i].Role = Role(snap.Nodes[i].Role)
	}
	return snap
}

func (m mapped) Handle(a policy.AuthorizedAction) (bool, error) { return m.k.Handle(a) }
