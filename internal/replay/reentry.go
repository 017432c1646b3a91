package replay

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/targeting"
)

// reenter decides, on a warm session, whether the run starts at the
// capability's reentry step on the screen the session already shows. It
// returns that step's index, or -1 to enter at the entrypoint. It observes
// once and dispatches nothing. A run reenters only when the capability
// checks the identity of its result, the screen is on the run's origin, no
// declared outcome, recovery rule or undeclared dialog matches it, the
// reentry step's own expectation holds on it, and the reentry condition
// holds; it then emits reentered, and otherwise (on a warm session)
// reentry_declined with the reason.
func (r *run) reenter(ctx context.Context) int {
	re := r.c.Reentry
	if !r.o.Warm || re == nil {
		return -1
	}
	decline := func(format string, args ...any) int {
		r.emit("", evidence.ReentryDeclined{Reason: fmt.Sprintf(format, args...)})
		return -1
	}
	at := slices.IndexFunc(r.c.Steps, func(s domain.Step) bool { return s.ID == re.Step })
	if at < 0 {
		return decline("no step %s", re.Step)
	}
	// r.c is bound (its placeholders hold the inputs): ask the sealed file.
	if !capability.ChecksIdentity(r.o.Capability.Capability) {
		return decline("the capability does not check the identity of its result")
	}
	snap, err := r.disp.Observe(ctx)
	if err != nil {
		return decline("observe the warm session: %v", err)
	}
	r.noteSnapshot(snap)
	if !sameOrigin(snap.URL, r.o.BaseURL) {
		return decline("the session shows another origin than the run's base URL")
	}
	v := r.classify(snap, r.stepExpectation(&r.c.Steps[at]))
	switch v.kind {
	case vOutcome:
		return decline("outcome %s is on screen (it may belong to an earlier run)", v.outcome.Code)
	case vRecovery:
		return decline("recovery rule %s matches the screen", v.rule.ID)
	case vUnexpected, vFailed:
		return decline("%s", v.end().msg)
	}
	ok, err := targeting.Eval(snap, &re.When)
	switch {
	case err != nil:
		return decline("reentry condition: %v", err)
	case !ok:
		return decline("the reentry condition does not hold")
	}
	r.emit(re.Step, evidence.Reentered{Step: re.Step})
	return at
}

// sameOrigin reports whether page is on base's scheme and host.
func sameOrigin(page, base string) bool {
	p, err := url.Parse(page)
	if err != nil {
		return false
	}
	b, err := url.Parse(base)
	return err == nil && p.Scheme == b.Scheme && p.Host == b.Host
}
