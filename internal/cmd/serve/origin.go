package servecmd

import (
	"context"
	"fmt"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
	"github.com/cuahq/cua/internal/policy"
)

// newAPI is the API over q; with --allow-origin it refuses at submit (400
// naming base_url) a run whose base URL the workers would refuse, so the
// caller learns at once instead of from a FAILED job.
func newAPI(q *jobs.Queue, caps jobs.Capabilities, allow []string, addr, token string) (*api.Handler, error) {
	if len(allow) == 0 {
		return api.New(q, addr, token)
	}
	return api.New(originGate{Queue: q, caps: caps, allow: allow}, addr, token)
}

// originGate is the queue, checking each submitted run's base URL against
// its capability's declared origins and serve's --allow-origin first. The
// workers check again before each run (they hold the secrets); this is
// only the early answer.
type originGate struct {
	*jobs.Queue
	caps  jobs.Capabilities
	allow []string
}

// Submit refuses a base URL no allowed origin admits, else submits.
func (g originGate) Submit(ctx context.Context, a jobs.RunArgs) (*jobs.Job, error) {
	if a.BaseURL == "" {
		return g.Queue.Submit(ctx, a) // the queue names the missing field
	}
	l, _, err := g.caps.Resolve(ctx, a.Ref)
	if err != nil {
		return g.Queue.Submit(ctx, a) // the queue names the ref and why
	}
	origin, ok, err := policy.OriginAllowed(a.BaseURL, l.Capability.Policy.AllowedDomains, g.allow)
	switch {
	case err != nil:
		return nil, refusal(fmt.Sprintf("base_url: %v", err))
	case !ok:
		return nil, refusal(fmt.Sprintf("base_url: origin %s is not allowed: %s declares no such origin in policy.allowed_domains "+
			"and this server was not started with --allow-origin %s; a run's base_url only picks among the origins its "+
			"capability declares and the workers allow (--allow-origin)", origin, l.Capability.Ref(), origin))
	}
	return g.Queue.Submit(ctx, a)
}

// refusal is a run refused before it is queued: the API answers 400 with
// the field its message starts with.
type refusal string

func (r refusal) Error() string        { return string(r) }
func (r refusal) Is(target error) bool { return target == jobs.ErrRefused }
