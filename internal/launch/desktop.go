package launch

import (
	"context"
	"fmt"
	"net/url"

	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/desktop"
)

// DesktopOptions describes a desktop session. The application is named by
// the base URL's host (the allowlist names applications by executable:
// base URL http://mousepad, allowed_domains [mousepad]).
type DesktopOptions struct {
	// Display is an X display to use (--display); empty starts a private
	// Xvfb and session bus on first use, closed with the Launcher.
	Display string
	// SessionBus is the D-Bus session bus of Display's desktop (the
	// caller's DBUS_SESSION_BUS_ADDRESS); empty starts a private bus.
	SessionBus string
	// Command launches the application (--launch), with desktop's
	// URLPlaceholder replaced by the document URL; each navigation
	// restarts it, and the session ends it. Empty attaches to the running
	// application the base URL names.
	Command []string
}

// openDesktop opens a session on the desktop application. l.mu is held.
func (l *Launcher) openDesktop(ctx context.Context) (surface.Surface, error) {
	o := l.opts.Desktop
	u, err := url.Parse(l.opts.BaseURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("desktop: base URL %q names no application (want http://EXECUTABLE)", l.opts.BaseURL)
	}
	cfg := desktop.Config{Display: o.Display, SessionBus: o.SessionBus, Command: o.Command, App: u.Hostname(), Logger: l.opts.Logger}
	if o.Display == "" || o.SessionBus == "" {
		if l.env == nil {
			env, err := desktop.StartEnv(ctx, desktop.EnvOptions{Display: o.Display, Logger: l.opts.Logger})
			if err != nil {
				return nil, fmt.Errorf("start desktop session: %w", err)
			}
			l.env = env
		}
		cfg.Display, cfg.SessionBus, cfg.Env = l.env.Display, l.env.SessionBus, l.env.Environ()
	} else {
		cfg.Env = desktop.AttachEnviron(o.Display, o.SessionBus)
	}
	s, err := desktop.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open desktop session: %w", err)
	}
	return s, nil
}
