package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
)

// EvalWarning says, for an eval replay of c on target, that the eval sends
// c's irreversible steps for real (a transfer moves money on target),
// naming the steps and the target and pointing to a staging copy; "" when
// c has no irreversible step.
func EvalWarning(c *domain.Capability, target string) string {
	var ids []string
	for _, st := range c.Steps {
		if st.Risk == domain.RiskIrreversible {
			ids = append(ids, st.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	step := "step"
	if len(ids) > 1 {
		step = "steps"
	}
	return fmt.Sprintf("the eval replay of %s sends its irreversible %s %s to %s for real: run evals against a staging copy of the application, not production",
		c.Ref(), step, strings.Join(ids, ", "), target)
}

// evalGate is a Gate that knows whether its run is an eval replay (the
// catalog's does).
type evalGate interface{ Eval() bool }

// warnEval logs [EvalWarning] through o's logger when p's gate runs an
// eval replay of a capability with irreversible steps.
func warnEval(ctx context.Context, p ReplayParams, o replay.Options) {
	g, ok := p.Gate.(evalGate)
	if !ok || !g.Eval() || o.Logger == nil {
		return
	}
	if w := EvalWarning(o.Capability.Capability, o.BaseURL); w != "" {
		o.Logger.WarnContext(ctx, w)
	}
}
