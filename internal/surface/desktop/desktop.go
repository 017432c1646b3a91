// Package desktop is the surface adapter for native Linux desktop
// applications: it reads an application's accessibility tree from AT-SPI
// over D-Bus (the registry on the accessibility bus, then each object's
// Accessible, Component, Text, Selection and Value interfaces), maps AT-SPI
// role names to domain's canonical roles inside itself, acts through
// AT-SPI's Action, EditableText, Selection and Component interfaces on the
// resolved node, and photographs the X server for screenshots. Windows play
// the part of frames: the application's first window is the top document,
// every other window a frame named by its title; a message box is the
// port's dialog.
//
// It owns the AT-SPI client, the role table, the desktop session ([Env]:
// Xvfb, a private session bus and the AT-SPI bus it activates) and the
// lifetime of the application it launches. It must never leak an AT-SPI
// role name into a snapshot, synthesize input events where an accessibility
// interface can act, or act without a policy.AuthorizedAction.
package desktop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("desktop surface closed")

// URLPlaceholder in a launch command is replaced by the document URL a
// navigation opens.
const URLPlaceholder = "{url}"

// Config describes one desktop session.
type Config struct {
	// Display is the X display and SessionBus the D-Bus session bus the
	// application lives on (an [Env]'s, or the user's own).
	Display, SessionBus string
	// Env is the applications' environment ([Env.Environ]).
	Env []string
	// Command launches the application: a navigation (re)starts it, with
	// the URL in place of any URLPlaceholder argument. Empty attaches to a
	// running application named App instead (the first the registry lists
	// when several share the name).
	Command []string
	// App names the application: the host its URLs carry (the allowlist
	// names applications by executable) and, when attaching, the AT-SPI
	// application name. Default: Command[0]'s base name.
	App string
	// StartTimeout bounds the wait for a launched application to appear on
	// the accessibility bus; default 45s (a loaded machine starts a GTK
	// program slowly; only a program that never appears waits it out).
	StartTimeout time.Duration
	Logger       *slog.Logger
}

// Surface is one session on a desktop application. Its methods are safe
// for concurrent use; one run owns it.
type Surface struct {
	cfg Config
	bus *bus
	log *slog.Logger

	mu      sync.Mutex
	closed  bool
	proc    *exec.Cmd
	appBus  string // the application's bus name; "" before the first navigation
	mainWin ref    // the first window the launched application showed
	url     string
	seq     uint64
	gen     uint64
	hash    uint64
	hashed  bool
	genAt   map[uint64]uint64
	last    *view
	crashed error
	wake    chan struct{} // closed at the next change event
}

var _ surface.Surface = (*Surface)(nil)

// Open connects to the accessibility bus of cfg's session. A launched
// application starts at the first navigation; an attached one is looked up
// now.
func Open(ctx context.Context, cfg Config) (*Surface, error) {
	if cfg.App == "" && len(cfg.Command) > 0 {
		cfg.App = appName(cfg.Command[0])
	}
	if cfg.App == "" {
		return nil, errors.New("desktop: no application: Command or App is required")
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 45 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b, err := dialA11y(ctx, cfg.SessionBus)
	if err != nil {
		return nil, fmt.Errorf("desktop: %w", err)
	}
	s := &Surface{cfg: cfg, bus: b, log: log, genAt: map[uint64]uint64{}}
	events, err := b.listen(ctx)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("desktop: subscribe to AT-SPI events: %w", err)
	}
	go s.watch(events)
	if len(cfg.Command) == 0 {
		name, err := s.findApp(ctx, func(ctx context.Context, r ref) bool {
			var n string
			return s.bus.prop(ctx, r, ifAccessible, "Name", &n) == nil && n == cfg.App
		})
		if err != nil {
			b.close()
			return nil, err
		}
		s.mu.Lock()
		s.appBus = name
		s.mu.Unlock()
	}
	return s, nil
}

func appName(cmd string) string {
	base := filepath.Base(cmd)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// findApp polls the registry until match accepts one of its applications.
func (s *Surface) findApp(ctx context.Context, match func(context.Context, ref) bool) (string, error) {
	deadline := time.Now().Add(s.cfg.StartTimeout)
	for {
		apps, err := s.bus.apps(ctx)
		if err != nil {
			return "", fmt.Errorf("desktop: %w", err)
		}
		for _, a := range apps {
			if match(ctx, a) {
				return a.Bus, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("desktop: application %q did not appear on the accessibility bus within %s", s.cfg.App, s.cfg.StartTimeout)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// usable reports ErrClosed or a lost application.
func (s *Surface) usableLocked() error {
	if s.closed {
		return ErrClosed
	}
	if s.crashed != nil {
		return s.crashed
	}
	return nil
}

// windows returns the application's top-level windows, and ErrCrashed when
// the application is gone.
func (s *Surface) windows(ctx context.Context) ([]ref, error) {
	if s.appBus == "" {
		return nil, nil
	}
	var kids []ref
	err := s.bus.call(ctx, ref{s.appBus, rootPath}, ifAccessible+".GetChildren", []any{&kids})
	if errors.Is(err, errGone) {
		s.crashed = fmt.Errorf("desktop: application %s is gone: %w", s.cfg.App, surface.ErrCrashed)
		return nil, s.crashed
	}
	if err != nil {
		return nil, fmt.Errorf("desktop: list windows: %w", err)
	}
	// The main window is the top document wherever the toolkit lists it
	// (GTK lists the newest window first).
	for i, k := range kids {
		if k == s.mainWin && i > 0 {
			kids = append(append([]ref{k}, kids[:i]...), kids[i+1:]...)
			break
		}
	}
	return kids, nil
}

// read walks the application and records a change when the tree differs
// from the last read.
func (s *Surface) read(ctx context.Context) (*view, error) {
	wins, err := s.windows(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := s.bus.walk(ctx, wins)
	if err != nil {
		return nil, fmt.Errorf("desktop: read accessibility tree: %w", err)
	}
	v := build(nodes, s.url, s.mainWin)
	if s.mainWin == (ref{}) {
		s.mainWin = v.main
	}
	if v.url != "" {
		s.url = v.url
	}
	if !s.hashed || v.hash != s.hash {
		s.hash, s.hashed = v.hash, true
		s.gen++
	}
	s.last = &v
	return &v, nil
}

// Observe reads the application's windows into a snapshot.
func (s *Surface) Observe(ctx context.Context) (*domain.UiSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return nil, err
	}
	v, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	s.seq++
	s.genAt[s.seq] = s.gen
	delete(s.genAt, s.seq-256)
	snap := v.snap
	snap.Seq = s.seq
	if snap.URL == "" {
		snap.URL = s.url
	}
	return snap, nil
}

// ChangedSince reports whether the application announced a change (an
// AT-SPI event) after observation since, or, when it announced none, whether
// a hash of its tree now differs.
func (s *Surface) ChangedSince(ctx context.Context, since uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return false, err
	}
	at, ok := s.genAt[since]
	if !ok {
		return true, nil
	}
	if s.gen > at {
		return true, nil
	}
	if _, err := s.read(ctx); err != nil {
		return false, err
	}
	return s.gen > at, nil
}

// pollEvery is WaitChange's fallback polling interval: AT-SPI events wake
// it at once, and a tree hash read this often catches a change a toolkit
// did not announce.
const pollEvery = 250 * time.Millisecond

// WaitChange waits until the tree changed after observation since: woken
// by the application's AT-SPI events, and checking a hash of the tree
// every pollEvery.
func (s *Surface) WaitChange(ctx context.Context, since uint64) error {
	for {
		changed, err := s.ChangedSince(ctx, since)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if changed {
			return nil
		}
		s.mu.Lock()
		wake := s.waiterLocked()
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-time.After(pollEvery):
		}
	}
}

// Close ends the launched application and disconnects. It is idempotent.
func (s *Surface) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopApp()
	return s.bus.close()
}

// stopApp ends the launched application's process group.
func (s *Surface) stopApp() {
	if s.proc != nil {
		endGroup(s.proc)
		s.proc = nil
	}
}

// launch (re)starts the application on a document and waits for it on the
// accessibility bus.
func (s *Surface) launch(ctx context.Context, doc string) error {
	s.stopApp()
	args := make([]string, 0, len(s.cfg.Command))
	for _, a := range s.cfg.Command {
		args = append(args, strings.ReplaceAll(a, URLPlaceholder, doc))
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = s.cfg.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("desktop: launch %s: %w", s.cfg.App, err)
	}
	s.proc = cmd
	pid := uint32(cmd.Process.Pid)
	name, err := s.findApp(ctx, func(ctx context.Context, r ref) bool {
		p, err := s.bus.pid(ctx, r.Bus)
		return err == nil && p == pid
	})
	if err != nil {
		s.stopApp()
		return err
	}
	s.appBus, s.url, s.crashed, s.mainWin = name, doc, nil, ref{}
	s.gen++
	return s.waitWindow(ctx)
}

// waitWindow waits until the application shows a window.
func (s *Surface) waitWindow(ctx context.Context) error {
	deadline := time.Now().Add(s.cfg.StartTimeout)
	for {
		wins, err := s.windows(ctx)
		if err != nil {
			return err
		}
		if len(wins) > 0 {
			if len(wins) == 1 {
				s.mainWin = wins[0]
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("desktop: %s showed no window within %s", s.cfg.App, s.cfg.StartTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Millisecond):
		}
	}
}

// checkURL accepts a document URL of this application: the URL's host names
// the application (the allowlist names applications by executable).
func (s *Surface) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("desktop: navigate: %q is not an absolute URL", raw)
	}
	if !strings.EqualFold(u.Hostname(), s.cfg.App) {
		return fmt.Errorf("desktop: navigate: %s names application %q, this session runs %q: %w", raw, u.Hostname(), s.cfg.App, surface.ErrUnsupported)
	}
	return nil
}
