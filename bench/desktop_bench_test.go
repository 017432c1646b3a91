package bench

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface/desktop"
)

// BenchmarkDesktop measures the desktop surface on its GTK conformance
// fixture under a private Xvfb + AT-SPI session: observe (one AT-SPI walk
// of the window into a snapshot), act (one authorized click dispatched
// through AT-SPI's Action interface) and act-to-seen (the click until a
// snapshot shows its effect). Each reports its median and p95 in ms
// besides ns/op; valid with -benchtime=1x.
func BenchmarkDesktop(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := desktop.StartEnv(ctx, desktop.EnvOptions{})
	if err != nil {
		b.Fatalf("start desktop session (needs xvfb, dbus, at-spi2-core: make deps): %v", err)
	}
	defer env.Close()
	script, err := filepath.Abs("../internal/surface/desktop/testdata/fixture.py")
	if err != nil {
		b.Fatal(err)
	}
	s, err := desktop.Open(ctx, desktop.Config{Display: env.Display, SessionBus: env.SessionBus, Env: env.Environ(),
		Command: []string{"/usr/bin/python3", script, desktop.URLPlaceholder}, App: "fixture"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"fixture"}})
	if err != nil {
		b.Fatal(err)
	}
	act := func(a domain.Action, n *domain.Node) policy.AuthorizedAction {
		a.Actor = domain.ActorAutomation
		text := ""
		if a.Value != nil && a.Value.Literal != nil {
			text = *a.Value.Literal
		}
		aa, err := eng.Authorize(policy.Request{Action: a, Node: n, Text: text})
		if err != nil {
			b.Fatal(err)
		}
		return aa
	}
	if _, err := s.Dispatch(ctx, act(domain.Action{Type: domain.ActNavigate, URL: "http://fixture/main.html"}, nil)); err != nil {
		b.Fatal(err)
	}
	greet := func() domain.Node {
		snap, err := s.Observe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range perception.Normalize(snap).Nodes {
			if n.Role == domain.RoleButton && n.Name == "Greet" {
				return n
			}
		}
		b.Fatal("no Greet button")
		return domain.Node{}
	}
	b.Run("observe", func(b *testing.B) {
		var d []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := s.Observe(ctx); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		report(b, d)
	})
	b.Run("act", func(b *testing.B) {
		n := greet()
		var d []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := s.Dispatch(ctx, act(domain.Action{Type: domain.ActClick}, &n)); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		report(b, d)
	})
	b.Run("act_to_seen", func(b *testing.B) {
		n := greet()
		var d []time.Duration
		i := 0
		for b.Loop() {
			i++
			name := "N" + time.Duration(i).String()
			start := time.Now()
			box := findRole(b, s, ctx, domain.RoleTextbox, "Name")
			if _, err := s.Dispatch(ctx, act(domain.Action{Type: domain.ActType, Value: domain.Lit(name)}, &box)); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Dispatch(ctx, act(domain.Action{Type: domain.ActClick}, &n)); err != nil {
				b.Fatal(err)
			}
			for !hasName(b, s, ctx, "Hello, "+name+" (Red)") {
				if ctx.Err() != nil {
					b.Fatal("the greeting never showed")
				}
			}
			d = append(d, time.Since(start))
		}
		report(b, d)
	})
}

func findRole(b *testing.B, s *desktop.Surface, ctx context.Context, role, name string) domain.Node {
	snap, err := s.Observe(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range perception.Normalize(snap).Nodes {
		if n.Role == role && n.Name == name {
			return n
		}
	}
	b.Fatalf("no %s %q", role, name)
	return domain.Node{}
}

func hasName(b *testing.B, s *desktop.Surface, ctx context.Context, name string) bool {
	snap, err := s.Observe(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range snap.Nodes {
		if perception.CleanName(n.Name) == perception.CleanName(name) {
			return true
		}
	}
	return false
}

// report adds the median and p95 of d, in milliseconds.
func report(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	ms := func(q float64) float64 {
		return float64(d[min(len(d)-1, int(q*float64(len(d))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.95), "p95-ms")
}
