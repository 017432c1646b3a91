package desktop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/surface/desktop"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// The package shares one desktop session (Xvfb, bus, AT-SPI) across its
// tests; each test launches its own application in it.
var (
	envOnce sync.Once
	env     *desktop.Env
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		_ = env.Close()
	}
	os.Exit(code)
}

// session returns the shared desktop session, starting it on first use.
func session(tb testing.TB) *desktop.Env {
	tb.Helper()
	envOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
		defer cancel()
		env, envErr = desktop.StartEnv(ctx, desktop.EnvOptions{})
	})
	if envErr != nil {
		tb.Fatalf("start desktop session (needs xvfb, dbus, at-spi2-core: make deps): %v", envErr)
	}
	return env
}

// fixtureCommand is the GTK fixture app's launch command.
func fixtureCommand(tb testing.TB, extra ...string) []string {
	tb.Helper()
	script, err := filepath.Abs("testdata/fixture.py")
	if err != nil {
		tb.Fatal(err)
	}
	cmd := append([]string{"/usr/bin/python3", script}, extra...)
	return append(cmd, desktop.URLPlaceholder)
}

// fixtureURL is the URL of a fixture page; its host names the application.
func fixtureURL(page string) string {
	if page == surfacetest.PageForm {
		return "" // a desktop app has no POST-backed documents
	}
	return fmt.Sprintf("http://fixture/%s.html", page)
}

// openFixture opens a surface on the fixture app, closed with the test.
func openFixture(tb testing.TB, extra ...string) *desktop.Surface {
	tb.Helper()
	e := session(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
	defer cancel()
	s, err := desktop.Open(ctx, desktop.Config{
		Display: e.Display, SessionBus: e.SessionBus, Env: e.Environ(),
		Command: fixtureCommand(tb, extra...), App: "fixture",
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	surfacetest.Exercise(t, func(t *testing.T) surfacetest.Harness {
		return surfacetest.Harness{Surface: openFixture(t), URL: fixtureURL}
	})
}
