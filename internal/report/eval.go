package report

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/pipeline"
)

// EvalWarning is the warning to print before an eval replay of c on
// target when c has irreversible steps (see [pipeline.EvalWarning]); ""
// when c has none.
func EvalWarning(c *domain.Capability, target string) string {
	if w := pipeline.EvalWarning(c, target); w != "" {
		return "warning: " + w
	}
	return ""
}
