package catalog

import (
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// SubRisk returns the declared risk of the capability a call names: the
// one with content hash pin, or ref's when pin is empty.
type SubRisk func(ref, pin string) (domain.Risk, error)

// DiffPinned is Diff that also judges the capabilities a and b call: a
// changed pin of a prerequisite or run_capability remedy, or a new call, is
// marked [risk up] when the capability b pins declares a higher risk than
// the one a pinned (than safe for a new call, or when a's cannot be
// resolved). A capability b pins that risk cannot resolve is an error: a
// reviewer must see what the new closure may do.
func DiffPinned(a, b *domain.Capability, risk SubRisk) ([]Change, error) {
	out, err := Diff(a, b)
	if err != nil {
		return nil, err
	}
	before, after := callsByPath(a), callsByPath(b)
	for i, c := range out {
		path, pinChange := strings.CutSuffix(c.Path, ".content_hash")
		nb, ok := after[path]
		if !ok || (!pinChange && c.Kind != Added) || c.Kind == Removed {
			continue
		}
		rb, err := risk(nb.ref, nb.pin)
		if err != nil {
			return nil, fmt.Errorf("diff: %s: %s (%s): %w", path, nb.ref, nb.pin, err)
		}
		ra := domain.RiskSafe
		if na, ok := before[path]; ok {
			if r, err := risk(na.ref, na.pin); err == nil {
				ra = r
			}
		}
		out[i].RiskUp = out[i].RiskUp || riskRank(string(rb)) > riskRank(string(ra))
	}
	return out, nil
}

// call is one reference to another capability and its pin.
type call struct{ ref, pin string }

// callsByPath indexes c's prerequisites and run_capability remedies by the
// path Diff names them with: "prerequisites[<id>]", "recovery[<rule id>]".
func callsByPath(c *domain.Capability) map[string]call {
	m := map[string]call{}
	for _, p := range c.Prerequisites {
		id, _, _ := strings.Cut(p.Capability, "@")
		m["prerequisites["+id+"]"] = call{p.Capability, p.ContentHash}
	}
	for _, r := range c.Recovery {
		if r.Remedy == domain.RemedyRunCapability {
			m["recovery["+r.ID+"]"] = call{r.Capability, r.ContentHash}
		}
	}
	return m
}
