// Package hitl owns the human-in-the-loop primitives: the session Lease
// with its epoch (who may act on a session, and since when), and later the
// SessionBroker and intervention queue.
//
// hitl never acts on a surface and never authorizes an action: it only
// says who holds a session at which epoch, which runtime checks before
// every dispatch and policy binds into every AuthorizedAction.
package hitl

import (
	"sync"

	"github.com/cuahq/cua/internal/domain"
)

// Lease says who holds a session. Every change of holder increments the
// epoch, so an action authorized under an older epoch is refused even if its
// holder later gets the session back (DESIGN invariant 8). Safe for
// concurrent use.
type Lease struct {
	mu     sync.Mutex
	holder string
	epoch  uint64
}

// NewLease returns a lease held by holder at epoch 1.
func NewLease(holder string) *Lease { return &Lease{holder: holder, epoch: 1} }

// Holder returns the current holder and epoch.
func (l *Lease) Holder() (string, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder, l.epoch
}

// Transfer hands the session to holder and returns the new epoch.
func (l *Lease) Transfer(holder string) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder = holder
	l.epoch++
	return l.epoch
}

// Check returns a LEASE_LOST error unless holder holds the lease at epoch.
func (l *Lease) Check(holder string, epoch uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder != holder {
		return domain.Errorf(domain.CodeLeaseLost, "session is held by %q, not %q", l.holder, holder)
	}
	if l.epoch != epoch {
		return domain.Errorf(domain.CodeLeaseLost, "lease epoch is %d, action was authorized at %d", l.epoch, epoch)
	}
	return nil
}
