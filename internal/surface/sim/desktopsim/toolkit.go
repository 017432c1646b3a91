package desktopsim

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface/sim"
)

// Toolkit is the simulated desktop application: the conformance fixture
// app ([sim.Fixture]'s behaviour) as a GTK-like toolkit exposes it over
// AT-SPI, so its accessible tree speaks AT-SPI's role names ("push button",
// "text" for an entry, "label" for static text, "document frame"). It is
// the platform side: it knows nothing of cua's canonical roles beyond
// drawing the same screen.
type Toolkit struct {
	fx *sim.Fixture
}

// NewToolkit returns the desktop application showing an empty window.
func NewToolkit() *Toolkit { return &Toolkit{fx: sim.NewFixture()} }

// URL returns the address of a fixture page, as surfacetest.Harness.URL
// wants.
func (k *Toolkit) URL(page string) string { return k.fx.URL(page) }

// Accessible returns the application's accessible tree with AT-SPI role
// names.
func (k *Toolkit) Accessible() *domain.UiSnapshot {
	snap := k.fx.Render()
	for i := range snap.Nodes {
		snap.Nodes[i].Role = toolkitRole(snap.Nodes[i].Role)
	}
	return snap
}

// Handle performs an authorized action on the application.
func (k *Toolkit) Handle(a policy.AuthorizedAction) (bool, error) { return k.fx.Handle(a) }

// toolkitRole is how the toolkit names the widgets it draws.
func toolkitRole(widget string) string {
	switch widget {
	case "document":
		return "document frame"
	case "iframe":
		return "internal frame"
	case "heading":
		return "heading"
	case "textbox":
		return "text"
	case "text":
		return "label"
	case "combobox":
		return "combo box"
	case "option":
		return "list item"
	case "button":
		return "push button"
	case "link":
		return "link"
	case "status":
		return "status bar"
	case "alertdialog":
		return "alert"
	}
	return "filler"
}
