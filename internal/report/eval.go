package report

import (
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// EvalWarning is the warning to print before an eval replay of c on
// target when c has irreversible steps: the eval sends them for real (a
// transfer moves money on target). It names the steps and the target and
// points to a staging copy; "" when c has no irreversible step.
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
	return fmt.Sprintf("warning: the eval replay of %s sends its irreversible %s %s to %s for real: run evals against a staging copy of the application, not production",
		c.Ref(), step, strings.Join(ids, ", "), target)
}
