package launch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface/desktop"
)

// TestOpenDesktopStartsAPrivateSession opens a desktop session with no
// display given: the Launcher starts Xvfb and a bus, launches the fixture
// app on the first navigation, and Close ends them.
func TestOpenDesktopStartsAPrivateSession(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../surface/desktop/testdata/fixture.py")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
	defer cancel()
	l := New(Options{Kind: domain.SurfaceDesktop, BaseURL: "http://fixture",
		Desktop: DesktopOptions{Command: []string{"/usr/bin/python3", script, desktop.URLPlaceholder}}})
	defer l.Close()
	s, err := l.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l.env == nil || !strings.HasPrefix(l.env.Display, ":") {
		t.Fatalf("no private display started: %+v", l.env)
	}
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"fixture"}})
	if err != nil {
		t.Fatal(err)
	}
	nav, err := eng.Authorize(policy.Request{Action: domain.Action{Type: domain.ActNavigate, URL: "http://fixture/second.html", Actor: domain.ActorAutomation}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dispatch(ctx, nav); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Title != "Second" || snap.URL != "http://fixture/second.html" {
		t.Errorf("snapshot title %q url %q, want Second at http://fixture/second.html", snap.Title, snap.URL)
	}
}

func TestOpenDesktopNeedsAnApplication(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "not a url", "file:///x"} {
		l := New(Options{Kind: domain.SurfaceDesktop, BaseURL: base})
		if _, err := l.Open(t.Context()); err == nil || !strings.Contains(err.Error(), "names no application") {
			t.Errorf("base URL %q: err = %v, want one saying it names no application", base, err)
		}
		l.Close()
	}
}
