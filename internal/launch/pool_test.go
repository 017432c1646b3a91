package launch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

// simPool is a Pool over sim surfaces with a clock the test moves.
type simPool struct {
	*Pool
	now time.Time
}

func newSimPool(o PoolOptions) *simPool {
	p := &simPool{now: time.Unix(1_700_000_000, 0)}
	o.Now = func() time.Time { return p.now }
	p.Pool = NewPool(func(context.Context) (surface.Surface, error) {
		return sim.New(sim.NewFixture()), nil
	}, o)
	return p
}

func alive(s surface.Surface) bool {
	_, err := s.Observe(context.Background())
	return !errors.Is(err, surface.ErrCrashed)
}

func rec(status domain.RunStatus) *domain.RunRecord { return &domain.RunRecord{Status: status} }

// TestPoolKeepsOnlyWellEndedSessions: which run endings give the session
// back warm, and which close it.
func TestPoolKeepsOnlyWellEndedSessions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ttl  time.Duration
		rec  *domain.RunRecord
		warm bool
	}{
		{name: "success", ttl: time.Minute, rec: rec(domain.StatusSuccess), warm: true},
		{name: "business outcome", ttl: time.Minute, rec: rec(domain.StatusBusinessOutcome), warm: true},
		{name: "failed", ttl: time.Minute, rec: rec(domain.StatusFailed)},
		{name: "needs human", ttl: time.Minute, rec: rec(domain.StatusNeedsHuman)},
		{name: "no record", ttl: time.Minute},
		{name: "warm sessions off", rec: rec(domain.StatusSuccess)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newSimPool(PoolOptions{TTL: tt.ttl})
			defer p.Close()
			s, warm, err := p.Take(t.Context())
			if err != nil || warm {
				t.Fatalf("first take: warm %v, %v", warm, err)
			}
			p.Return(s, tt.rec)
			if alive(s) != tt.warm {
				t.Fatalf("session alive %v after the run, want %v", alive(s), tt.warm)
			}
			s2, warm, err := p.Take(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if warm != tt.warm || (s2 == s) != tt.warm {
				t.Errorf("second take: warm %v, same session %v; want %v", warm, s2 == s, tt.warm)
			}
		})
	}
}

// TestPoolRetiresSessions: past the TTL, past MaxUses, beyond MaxIdle, and
// at Close, a session is closed.
func TestPoolRetiresSessions(t *testing.T) {
	t.Parallel()
	ok := rec(domain.StatusSuccess)
	t.Run("ttl", func(t *testing.T) {
		p := newSimPool(PoolOptions{TTL: time.Minute})
		s, _, _ := p.Take(t.Context())
		p.Return(s, ok)
		p.now = p.now.Add(61 * time.Second)
		s2, warm, _ := p.Take(t.Context())
		if warm || s2 == s || alive(s) {
			t.Errorf("an idle session past its TTL was lent again (warm %v) or left open (%v)", warm, alive(s))
		}
	})
	t.Run("max uses", func(t *testing.T) {
		p := newSimPool(PoolOptions{TTL: time.Minute, MaxUses: 2})
		s, _, _ := p.Take(t.Context())
		p.Return(s, ok)
		if s2, warm, _ := p.Take(t.Context()); !warm || s2 != s {
			t.Fatal("the first use did not come back warm")
		}
		p.Return(s, ok)
		if alive(s) || p.Idle() != 0 {
			t.Errorf("a session at MaxUses stays (alive %v, idle %d)", alive(s), p.Idle())
		}
	})
	t.Run("max idle and close", func(t *testing.T) {
		p := newSimPool(PoolOptions{TTL: time.Minute, MaxIdle: 2})
		var ss []surface.Surface
		for range 3 {
			s, _, _ := p.Take(t.Context())
			ss = append(ss, s)
		}
		for _, s := range ss {
			p.Return(s, ok)
		}
		if p.Idle() != 2 || alive(ss[0]) || !alive(ss[2]) {
			t.Errorf("idle %d; oldest alive %v, newest alive %v", p.Idle(), alive(ss[0]), alive(ss[2]))
		}
		p.Close()
		if alive(ss[1]) || alive(ss[2]) {
			t.Error("Close left idle sessions open")
		}
		s, _, _ := p.Take(t.Context())
		if s != nil {
			t.Error("a closed pool lent a session")
		}
	})
}

// TestPoolLendsEachSessionOnce: concurrent runs never share a session.
func TestPoolLendsEachSessionOnce(t *testing.T) {
	t.Parallel()
	p := newSimPool(PoolOptions{TTL: time.Minute, MaxIdle: 4})
	defer p.Close()
	var mu sync.Mutex
	inUse := map[surface.Surface]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				s, _, err := p.Take(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if inUse[s] {
					t.Error("one session lent to two runs at once")
				}
				inUse[s] = true
				mu.Unlock()
				mu.Lock()
				inUse[s] = false
				mu.Unlock()
				p.Return(s, rec(domain.StatusSuccess))
			}
		}()
	}
	wg.Wait()
}

// TestPoolSessionKeepsItsSecrets: the secrets remembered for a session go
// with it to the next run that takes it, and die with it.
func TestPoolSessionKeepsItsSecrets(t *testing.T) {
	t.Parallel()
	p := newSimPool(PoolOptions{TTL: time.Minute, MaxIdle: 2})
	defer p.Close()
	s, _, err := p.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Secrets(s); len(got) != 0 {
		t.Fatalf("fresh session: secrets %q", got)
	}
	p.Remember(s, "OP1001", "", "teller-pass-1", "OP1001")
	p.Return(s, rec(domain.StatusSuccess))
	p.Remember(s, "late") // not lent: ignored
	w, warm, err := p.Take(t.Context())
	if err != nil || !warm || w != s {
		t.Fatalf("Take = %v, %v, %v; want the warm session", w, warm, err)
	}
	if got := p.Secrets(w); len(got) != 2 || got[0] != "OP1001" || got[1] != "teller-pass-1" {
		t.Fatalf("warm session: secrets %q, want OP1001 and teller-pass-1", got)
	}
	p.Return(w, rec(domain.StatusFailed)) // closed
	f, warm, err := p.Take(t.Context())
	if err != nil || warm {
		t.Fatalf("Take after a failed run: warm %v, %v", warm, err)
	}
	if got := p.Secrets(f); len(got) != 0 {
		t.Errorf("fresh session after a closed one: secrets %q", got)
	}
	p.Return(f, nil)
}
