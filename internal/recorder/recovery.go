package recorder

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// prerequisites carries the trace's prerequisites over.
func (k *compiler) prerequisites() {
	for _, p := range k.t.Prerequisites {
		if refID(p.Capability) == k.c.ID {
			k.note("prerequisite %s dropped: a capability cannot require itself", p.Capability)
			continue
		}
		k.c.Prerequisites = append(k.c.Prerequisites, clone(p))
	}
}

// recovery declares transient_load and, per sign-on prerequisite, a
// session_expired rule.
func (k *compiler) recovery() {
	c := k.c
	c.Recovery = append(c.Recovery, domain.RecoveryRule{
		ID:          "transient_load",
		Description: "The app answered 502/503/504; reload and retry.",
		When:        domain.Predicate{HTTPStatusIn: []int{502, 503, 504}},
		Remedy:      domain.RemedyReload,
		MaxAttempts: transientAttempts,
		Backoff:     transientBackoff,
	})
	n := 0
	for _, p := range c.Prerequisites {
		known := k.known(p.Capability)
		if !isSignOn(p.Capability, known) {
			continue
		}
		var when *domain.Predicate
		switch {
		case p.When != nil:
			when = ptr(clone(*p.When))
		case known != nil && len(known.Steps) > 0 && known.Steps[0].Target != nil:
			t := clone(*known.Steps[0].Target)
			t.Hints, t.RecordedStrategy = nil, ""
			when = &domain.Predicate{NodeExists: &t}
			k.note("recovery session_expired runs %s when its first step's target, %s, is on screen: check that this shows only when the session ended", p.Capability, describeTarget(&t))
		default:
			k.note("prerequisite %s signs on, but neither its condition nor its first step is known: add a session_expired recovery rule by hand", p.Capability)
			continue
		}
		id := "session_expired"
		if n++; n > 1 {
			id = fmt.Sprintf("session_expired_%d", n)
		}
		c.Recovery = append(c.Recovery, domain.RecoveryRule{
			ID:          id,
			Description: "The session ended; sign on again and retry.",
			When:        *when,
			Remedy:      domain.RemedyRunCapability,
			Capability:  p.Capability,
			MaxAttempts: signOnAttempts,
		})
	}
}

// signOnWords are id segments that name a sign-on capability.
var signOnWords = []string{"auth", "sign_on", "signon", "sign_in", "signin", "login", "log_in", "logon", "log_on"}

// isSignOn reports whether a prerequisite signs on: its id has a sign-on
// segment, or the known capability types a secret.
func isSignOn(ref string, known *domain.Capability) bool {
	for _, seg := range strings.Split(refID(ref), ".") {
		if slices.Contains(signOnWords, seg) {
			return true
		}
	}
	if known != nil {
		for _, s := range known.Steps {
			if s.Action == domain.ActType && s.Value.IsSecret() {
				return true
			}
		}
	}
	return false
}

// known looks a capability up by id@version, then by id.
func (k *compiler) known(ref string) *domain.Capability {
	if c := k.opts.KnownCapabilities[ref]; c != nil {
		return c
	}
	return k.opts.KnownCapabilities[refID(ref)]
}

func refID(ref string) string {
	id, _, _ := strings.Cut(ref, "@")
	return id
}
