// Package launch opens the surface sessions a run acts on, from a plain
// description of the target: a Chromium session (launching one browser, or
// attaching to a running one, on first use and reusing it for every later
// session), a session on an application's HTTP state contract, held to
// its allowed origins, or a session on a native desktop application over
// AT-SPI (in a private Xvfb session started on first use, or on a given
// display).
//
// It owns building the surface adapters and their lifetime; a front end
// (the CLI, a worker) describes the target and closes the [Launcher] when
// the runs are done. It also opens the store a front end names (SQLite or
// PostgreSQL) and the catalog over it, and builds the model a discovery
// talks to. It never prints, reads flags or the environment (a Getenv is
// injected), authorizes or dispatches an action, or runs a capability.
package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/browser"
	"github.com/cuahq/cua/internal/surface/desktop"
	"github.com/cuahq/cua/internal/surface/state"
)

// Options describes the target.
type Options struct {
	// Kind is the surface: domain.SurfaceState for the state contract,
	// anything else for Chromium.
	Kind    domain.Surface
	BaseURL string
	// AllowedDomains are the capability's allowed_domains, for the state
	// surface (see [StateOrigins]) and for the browser's resolver rules
	// (browser.ResolverRules).
	AllowedDomains []string
	// Browser is the Chromium executable, CDPURL a running browser's
	// DevTools endpoint, Headful shows its window.
	Browser, CDPURL string
	Headful         bool
	// Desktop describes the desktop surface's session (Kind
	// domain.SurfaceDesktop).
	Desktop DesktopOptions
	Logger  *slog.Logger
}

// Launcher opens sessions. It is safe for concurrent use.
type Launcher struct {
	opts Options

	mu  sync.Mutex
	br  *browser.Browser
	env *desktop.Env
}

// New returns a Launcher for opts; nothing starts before [Launcher.Open].
func New(opts Options) *Launcher { return &Launcher{opts: opts} }

// Open returns a fresh session: a new browser context, or a new state
// contract session when the application offers one (its equivalent of a
// new browser context). The first web session launches the browser under
// ctx, which is then the browser's lifetime. Errors wrap "start browser"
// and "open browser session", or come from the state surface.
func (l *Launcher) Open(ctx context.Context) (surface.Surface, error) {
	if l.opts.Kind == domain.SurfaceState {
		return openState(ctx, l.opts.BaseURL, l.opts.AllowedDomains)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opts.Kind == domain.SurfaceDesktop {
		return l.openDesktop(ctx)
	}
	if l.br == nil {
		b, err := browser.Launch(ctx, browser.Options{ExecPath: l.opts.Browser, CDPURL: l.opts.CDPURL, Headful: l.opts.Headful, Logger: l.opts.Logger,
			AppDomains: l.opts.AllowedDomains})
		if err != nil {
			return nil, fmt.Errorf("start browser: %w", err)
		}
		l.br = b
	}
	s, err := l.br.NewSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("open browser session: %w", err)
	}
	return s, nil
}

// Close closes the browser, if one was launched (an attached browser keeps
// running). Sessions must be closed first.
func (l *Launcher) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.br != nil {
		l.br.Close()
		l.br = nil
	}
	if l.env != nil {
		_ = l.env.Close()
		l.env = nil
	}
}

func openState(ctx context.Context, base string, allowed []string) (*state.Surface, error) {
	s, err := state.New(base, nil, state.WithAllowedOrigins(StateOrigins(base, allowed)...))
	if err != nil {
		return nil, err
	}
	if err := s.StartSession(ctx); err != nil && !errors.Is(err, surface.ErrUnsupported) {
		s.Close()
		return nil, err
	}
	return s, nil
}

// StateOrigins turns allowed_domains into the origins a state session may
// reach: an origin entry ("https://h:1") as it is, a bare host on the base
// URL's scheme and port (80 or 443 when it has none). No entries, or a base
// URL that does not parse, give none: the base URL's origin only.
func StateOrigins(base string, allowed []string) []string {
	u, err := url.Parse(base)
	if err != nil || len(allowed) == 0 {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	var origins []string
	for _, d := range allowed {
		if strings.Contains(d, "://") {
			origins = append(origins, d)
			continue
		}
		origins = append(origins, u.Scheme+"://"+d+":"+port)
	}
	return origins
}

// BrowserFlags are the flags cua starts Chromium with (see
// browser.Flags), for a front end that hands them to another launcher
// (the Playwright spec cua codegen writes) without importing the adapter.
func BrowserFlags() []string { return browser.Flags() }
