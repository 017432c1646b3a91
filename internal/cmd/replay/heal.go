package replaycmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/heal"
)

// resolveActive opens heal proposals over the catalog's store (a run halted
// on its target proposes a heal) and turns "ID@active" into the version
// heal made active, remembering that the run counts toward its canary.
func (o *replayOptions) resolveActive(ctx context.Context, ref string) (string, error) {
	o.heal, _ = heal.Open(o.st, o.cat, nil)
	if o.active = strings.HasSuffix(ref, heal.ActiveSuffix); !o.active || o.heal == nil {
		return strings.TrimSuffix(ref, heal.ActiveSuffix), nil
	}
	return o.heal.ResolveRef(ctx, ref)
}

// observeCanary counts a finished run of ID@active toward its canary and
// says what that did: a pass, a promotion or a revert.
func (o *replayOptions) observeCanary(ctx context.Context, rec *domain.RunRecord) error {
	if !o.active || o.heal == nil {
		return nil
	}
	msg, err := o.heal.Observe(ctx, rec)
	if msg != "" {
		fmt.Fprintln(o.IO.ErrOut, "heal: "+msg)
	}
	return err
}
