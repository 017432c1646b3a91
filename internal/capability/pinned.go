package capability

import (
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// Call is one capability another capability may run in place: a
// prerequisite or a run_capability remedy.
type Call struct {
	// Field is the reference's field path ("prerequisites[0].capability",
	// "recovery[1].capability").
	Field string
	// Ref is the reference as written: "id" or "id@version".
	Ref string
	// Pin is the content hash written beside it, or "".
	Pin string
	// ReadBack marks an effect contract's read-back, which must be
	// read-only (ReadOnlyProblem).
	ReadBack bool
}

// Pinned reports whether the call names an exact id@version and pins its
// content hash (DESIGN invariant 14).
func (c Call) Pinned() bool {
	return strings.Contains(c.Ref, "@") && c.Pin != ""
}

// Calls lists every prerequisite, run_capability remedy and effect
// read-back of c, in that order.
func Calls(c *domain.Capability) []Call {
	var out []Call
	for i, p := range c.Prerequisites {
		out = append(out, Call{Field: fmt.Sprintf("prerequisites[%d].capability", i), Ref: p.Capability, Pin: p.ContentHash})
	}
	for i, r := range c.Recovery {
		if r.Remedy == domain.RemedyRunCapability {
			out = append(out, Call{Field: fmt.Sprintf("recovery[%d].capability", i), Ref: r.Capability, Pin: r.ContentHash})
		}
	}
	return append(out, readBackCalls(c)...)
}

// UnpinnedError refuses a sealed capability that names a sub-capability
// without pinning it: an approval of its hash would not cover what runs.
type UnpinnedError struct {
	// Capability is the caller's id@version.
	Capability string
	// Calls are the unpinned references, in file order.
	Calls []Call
}

func (e *UnpinnedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Capability)
	for i, c := range e.Calls {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %q is not pinned: want id@version with content_hash", c.Field, c.Ref)
	}
	return b.String()
}

// Unwrap classifies the error as CAPABILITY_INVALID.
func (e *UnpinnedError) Unwrap() error {
	return &domain.Error{Code: domain.CodeCapabilityInvalid, Message: e.Error()}
}

// CheckPinned refuses c when a prerequisite or run_capability remedy is a
// bare id or an id@version without content_hash. Every sealed capability
// must pass it before it is stored or run; a draft may keep bare ids while
// it is written (seal pins them).
func CheckPinned(c *domain.Capability) error {
	var bad []Call
	for _, call := range Calls(c) {
		if !call.Pinned() {
			bad = append(bad, call)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &UnpinnedError{Capability: c.Ref(), Calls: bad}
}
