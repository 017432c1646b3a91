package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// ActiveSuffix spells, in a run's reference, the version a heal made a
// capability's active one: "ID@active".
const ActiveSuffix = "@active"

// Active resolves "ID@active" to the version a heal made active and
// judges each finished run of it toward the heal's canary: a run that is
// neither SUCCESS nor a declared outcome reverts the active version (a
// *heal.Service).
type Active interface {
	ResolveRef(ctx context.Context, ref string) (string, error)
	Observe(ctx context.Context, rec *domain.RunRecord) (string, error)
}

// resolveActive turns "ID@active" into the active id@version (the
// catalog's highest sealed version when no heal set one); any other
// reference, or any reference without an Active, is returned as it is,
// active false.
func resolveActive(ctx context.Context, a Active, ref string) (resolved string, active bool, err error) {
	if a == nil || !strings.HasSuffix(ref, ActiveSuffix) {
		return ref, false, nil
	}
	resolved, err = a.ResolveRef(ctx, ref)
	if err != nil {
		return "", false, fmt.Errorf("resolve %s: %w", ref, err)
	}
	return resolved, true, nil
}
