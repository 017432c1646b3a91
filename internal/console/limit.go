package console

import (
	"net"
	"sync"
	"time"
)

// maxLimited bounds how many remote addresses the sign-in limiter
// remembers; past it, addresses whose window has passed are forgotten, and
// while it is still full, a new address is refused like an over-limit one
// (a flood of addresses cannot grow memory without bound).
const maxLimited = 10000

// limiter allows n sign-in tries per remote address in any window (a
// sliding log). Safe for concurrent use.
type limiter struct {
	n      int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	tries map[string][]time.Time // address → its tries in the window, oldest first
}

func newLimiter(n int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{n: n, window: window, now: now, tries: map[string][]time.Time{}}
}

// allow counts one try from remoteAddr ("host:port"; the port is left out,
// so every connection of a host counts together) and reports whether it is
// allowed; when not, retry says after how long the oldest try in the window
// leaves it.
func (l *limiter) allow(remoteAddr string) (ok bool, retry time.Duration) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.recent(host, now)
	if _, known := l.tries[host]; !known && len(l.tries) >= maxLimited {
		l.forget(now)
		if len(l.tries) >= maxLimited {
			return false, l.window
		}
	}
	if len(ts) >= l.n {
		l.tries[host] = ts
		return false, max(ts[0].Add(l.window).Sub(now), time.Second)
	}
	l.tries[host] = append(ts, now)
	return true, 0
}

// recent returns host's tries still in the window at now. l.mu is held.
func (l *limiter) recent(host string, now time.Time) []time.Time {
	ts := l.tries[host]
	i := 0
	for i < len(ts) && !ts[i].Add(l.window).After(now) {
		i++
	}
	return ts[i:]
}

// forget drops every address with no try in the window. l.mu is held.
func (l *limiter) forget(now time.Time) {
	for host := range l.tries {
		if len(l.recent(host, now)) == 0 {
			delete(l.tries, host)
		}
	}
}
