package replay

import "github.com/cuahq/cua/internal/domain"

// ownNames are the identifiers a capability gives its own parts (step
// ids, outcome codes, recovery rule ids; not input names, which a page may
// echo as labels of what the caller gave): the
// redactor must never read one as a credential label, or "step
// enter_password: …" in a message loses what follows (issue 24 item 8).
func ownNames(c *domain.Capability) []string {
	var out []string
	for i := range c.Steps {
		out = append(out, c.Steps[i].ID)
	}
	for i := range c.Outcomes {
		out = append(out, c.Outcomes[i].Code)
	}
	for i := range c.Recovery {
		out = append(out, c.Recovery[i].ID)
	}
	return out
}
