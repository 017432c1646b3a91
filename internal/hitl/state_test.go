package hitl_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
)

// clock is a settable clock for leases and brokers.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestLeaseTransitions walks the hand-off cycle and its refusals: every
// transition advances the epoch, a refused one changes nothing, and only
// the holder in RUNNING or HUMAN_CONTROL may act.
func TestLeaseTransitions(t *testing.T) {
	t.Parallel()
	const auto = "automation:r1"
	type op struct {
		name      string
		do        func(l *hitl.Lease, c *clock, epoch uint64) (hitl.Status, error)
		wantErr   bool
		wantState hitl.State
		wantHold  string
		// canAct is who may act after the op at the current epoch.
		canAct string
	}
	escalate := func(l *hitl.Lease, _ *clock, e uint64) (hitl.Status, error) { return l.Escalate(auto, e) }
	claim := func(op string) func(*hitl.Lease, *clock, uint64) (hitl.Status, error) {
		return func(l *hitl.Lease, _ *clock, _ uint64) (hitl.Status, error) { return l.Claim(op, time.Minute) }
	}
	release := func(op string) func(*hitl.Lease, *clock, uint64) (hitl.Status, error) {
		return func(l *hitl.Lease, _ *clock, e uint64) (hitl.Status, error) { return l.Release(op, e) }
	}
	resume := func(l *hitl.Lease, _ *clock, _ uint64) (hitl.Status, error) { return l.Resume() }
	run := func(l *hitl.Lease, _ *clock, _ uint64) (hitl.Status, error) { return l.Run(auto) }
	tests := []struct {
		name string
		ops  []op
	}{
		{"full cycle", []op{
			{"escalate", escalate, false, hitl.StatePaused, auto, ""},
			{"claim", claim("alice"), false, hitl.StateHumanControl, "human:alice", "human:alice"},
			{"release", release("alice"), false, hitl.StatePaused, auto, ""},
			{"resume", resume, false, hitl.StateResuming, auto, ""},
			{"run", run, false, hitl.StateRunning, auto, auto},
		}},
		{"refusals", []op{
			{"claim a running session", claim("alice"), true, hitl.StateRunning, auto, auto},
			{"resume a running session", resume, true, hitl.StateRunning, auto, auto},
			{"escalate", escalate, false, hitl.StatePaused, auto, ""},
			{"escalate twice", escalate, true, hitl.StatePaused, auto, ""},
			{"run while paused", run, true, hitl.StatePaused, auto, ""},
			{"claim", claim("alice"), false, hitl.StateHumanControl, "human:alice", "human:alice"},
			{"second claim", claim("bob"), true, hitl.StateHumanControl, "human:alice", "human:alice"},
			{"release by another", release("bob"), true, hitl.StateHumanControl, "human:alice", "human:alice"},
			{"resume under a hold", resume, true, hitl.StateHumanControl, "human:alice", "human:alice"},
		}},
		{"expiry", []op{
			{"escalate", escalate, false, hitl.StatePaused, auto, ""},
			{"claim", claim("alice"), false, hitl.StateHumanControl, "human:alice", "human:alice"},
			{"abandon past the ttl", func(l *hitl.Lease, c *clock, _ uint64) (hitl.Status, error) {
				c.Advance(time.Minute)
				return l.Status(), nil
			}, false, hitl.StatePaused, auto, ""},
			{"old holder releases", release("alice"), true, hitl.StatePaused, auto, ""},
			{"claim again", claim("bob"), false, hitl.StateHumanControl, "human:bob", "human:bob"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			l := hitl.NewLeaseAt(auto, c.Now)
			for _, o := range tt.ops {
				before := l.Status()
				st, err := o.do(l, c, before.Epoch)
				after := l.Status()
				if o.wantErr {
					if !errors.Is(err, hitl.ErrConflict) {
						t.Fatalf("%s: err = %v, want a conflict", o.name, err)
					}
					if after.Epoch != before.Epoch {
						t.Fatalf("%s: a refused transition moved the epoch %d → %d", o.name, before.Epoch, after.Epoch)
					}
				} else {
					if err != nil {
						t.Fatalf("%s: %v", o.name, err)
					}
					if after.Epoch <= before.Epoch {
						t.Fatalf("%s: epoch %d → %d, want it to advance", o.name, before.Epoch, after.Epoch)
					}
					if st.Epoch != after.Epoch {
						t.Fatalf("%s returned epoch %d, lease is at %d", o.name, st.Epoch, after.Epoch)
					}
				}
				if after.State != o.wantState || after.Holder != o.wantHold {
					t.Fatalf("%s: lease is %s held by %q, want %s held by %q", o.name, after.State, after.Holder, o.wantState, o.wantHold)
				}
				for _, who := range []string{auto, "human:alice", "human:bob"} {
					err := l.Check(who, after.Epoch)
					if (err == nil) != (who == o.canAct) {
						t.Fatalf("%s: Check(%q) = %v, want only %q to act", o.name, who, err, o.canAct)
					}
					if err != nil && domain.ErrorCode(err) != domain.CodeLeaseLost {
						t.Fatalf("%s: Check(%q) code = %s, want LEASE_LOST", o.name, who, domain.ErrorCode(err))
					}
				}
			}
		})
	}
}

// TestLeaseRenewKeepsEpoch: a renewal extends the hold and is not a
// transition.
func TestLeaseRenewKeepsEpoch(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := hitl.NewLeaseAt("a", c.Now)
	if _, err := l.Escalate("a", 1); err != nil {
		t.Fatal(err)
	}
	st, err := l.Claim("alice", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(50 * time.Second)
	rn, err := l.Renew("alice", st.Epoch, time.Minute)
	if err != nil || rn.Epoch != st.Epoch || !rn.ExpiresAt.Equal(c.Now().Add(time.Minute)) {
		t.Fatalf("Renew = %+v, %v; want epoch %d until %s", rn, err, st.Epoch, c.Now().Add(time.Minute))
	}
	c.Advance(50 * time.Second)
	if err := l.Check("human:alice", st.Epoch); err != nil {
		t.Fatalf("renewed hold lapsed early: %v", err)
	}
	if _, err := l.Renew("bob", st.Epoch, time.Minute); !errors.Is(err, hitl.ErrConflict) {
		t.Fatalf("Renew by another operator: %v, want a conflict", err)
	}
}

// TestLeaseClaimRace: of N goroutines claiming one paused lease exactly one
// wins and every other gets a conflict.
func TestLeaseClaimRace(t *testing.T) {
	t.Parallel()
	l := hitl.NewLease("a")
	if _, err := l.Escalate("a", 1); err != nil {
		t.Fatal(err)
	}
	const n = 32
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = l.Claim(string(rune('a'+i%26))+"-op", time.Minute)
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, hitl.ErrConflict):
			t.Fatalf("loser's err = %v, want a conflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d claims won, want exactly 1", wins)
	}
	if st := l.Status(); st.Epoch != 3 || st.State != hitl.StateHumanControl {
		t.Fatalf("lease after the race = %+v, want HUMAN_CONTROL at epoch 3", st)
	}
}
