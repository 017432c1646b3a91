package record

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/console"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
)

// Options configure a recording session.
type Options struct {
	Goal, BaseURL string
	// Kind is the surface the application runs on (web now; desktop once
	// its session casts frames).
	Kind domain.Surface
	// Inputs maps input names to the values the person will type (--input);
	// Secrets maps field names to secret refs (--secret).
	Inputs, Secrets map[string]string
	// Addr is where the recording page listens (loopback).
	Addr string
	// Auth signs people in with their principal tokens; Queue holds the
	// recording's row of the intervention queue while it is open.
	Auth  console.Authenticator
	Queue hitl.Queue
	// Open opens a session on the application (the demonstration's and
	// each eval's).
	Open     Opener
	Redactor *redact.Redactor
	Logger   *slog.Logger
	// Compile is how Stop compiles, seals and evaluates (its Open,
	// BaseURL, Redactor and Logger are filled from the above).
	Compile CompileOptions
}

// Session is one recording: the application's session parked in a
// console, the recording page, and the demonstration so far.
type Session struct {
	o    Options
	rec  *Recording
	srv  *console.Server
	run  *runtime.Run
	surf surface.Surface
	id   string

	parkCancel context.CancelFunc
	parked     chan error

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	result   *Result
	err      error

	errMu   sync.Mutex
	lastErr string
}

// Start opens the application, navigates to its base URL, parks the
// session in a console serving the recording page, and returns. Close it
// (Wait does) when done.
func Start(ctx context.Context, o Options) (*Session, error) {
	if o.Redactor == nil {
		o.Redactor = redact.New()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Kind == "" {
		o.Kind = domain.SurfaceWeb
	}
	s := &Session{o: o, id: "rec-" + randHex(6), stop: make(chan struct{}), done: make(chan struct{}), parked: make(chan error, 1)}
	s.rec = NewRecording(o.Goal, o.BaseURL, o.Kind, o.Inputs, o.Secrets)
	s.rec.OnSecret(o.Redactor.RegisterLiteral)
	surf, err := o.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the application: %w", err)
	}
	s.surf = surf
	if _, ok := surf.(surface.Screencaster); !ok {
		surf.Close()
		return nil, fmt.Errorf("the %s surface has no live picture to record on", o.Kind)
	}
	run, err := runtime.NewRun(runtime.RunConfig{Base: runtime.Base{Logger: o.Logger}, ID: s.id, BaseURL: o.BaseURL,
		Actor: domain.ActorHuman, Redactor: o.Redactor})
	if err != nil {
		surf.Close()
		return nil, err
	}
	s.run = run
	if err := s.enter(ctx); err != nil {
		surf.Close()
		return nil, err
	}
	if err := s.serve(ctx); err != nil {
		surf.Close()
		return nil, err
	}
	return s, nil
}

// enter navigates the session to the base URL, as the automation holder.
func (s *Session) enter(ctx context.Context) error {
	if s.o.Kind != domain.SurfaceWeb && s.o.Kind != domain.SurfaceDesktop { // a desktop navigation launches the application
		return nil
	}
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: s.run.Domains(nil),
		EntryOrigin: s.run.EntryOrigin()})
	if err != nil {
		return err
	}
	d, err := s.run.Dispatcher(s.surf, pol)
	if err != nil {
		return err
	}
	snap, err := d.Observe(ctx)
	if err != nil {
		return fmt.Errorf("observe the application: %w", err)
	}
	if _, err := d.Act(ctx, snap, domain.Action{Type: domain.ActNavigate, StepID: "record", URL: s.o.BaseURL}, ""); err != nil {
		return fmt.Errorf("open %s: %w", s.o.BaseURL, err)
	}
	return nil
}

// serve starts the console with the recording page and parks the session.
func (s *Session) serve(ctx context.Context) error {
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: s.o.Queue, Redact: s.o.Redactor.String, Logger: s.o.Logger,
		NewID: func() string { return "w" + time.Now().UTC().Format("20060102T150405") + "-" + randHex(4) }})
	if err != nil {
		return err
	}
	srv, err := console.New(console.Config{Addr: s.o.Addr, Auth: s.o.Auth, Broker: br, Logger: s.o.Logger,
		OnGesture: s.gesture, Landing: "/record"})
	if err != nil {
		return err
	}
	s.srv = srv
	s.routes()
	if err := srv.Open(ctx); err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.parkCancel = cancel
	go func() {
		s.parked <- srv.Park(pctx, runtime.Parked{Run: s.run, Surface: s.surf, Holder: s.run.Holder, Epoch: 1,
			Domains: s.run.Domains(nil), EntryOrigin: s.run.EntryOrigin(),
			Waiting: hitl.Waiting{SessionID: s.id, RunID: s.id, Capability: "recording", Step: "record",
				FailureCode: domain.CodeUnexpectedState, Summary: "a recording: " + s.o.Goal}})
	}()
	return nil
}

// URL is the recording page's address.
func (s *Session) URL() string { return s.srv.URL() + "/record" }

// ID is the session's id in the console.
func (s *Session) ID() string { return s.id }

// Recording is the demonstration so far.
func (s *Session) Recording() *Recording { return s.rec }

// gesture records a gesture the console dispatched.
func (s *Session) gesture(ctx context.Context, g console.Gesture) {
	err := s.rec.Gesture(Gesture{Kind: g.Input.Kind, Key: g.Input.Key, Before: g.Before, Node: g.Node, Risk: g.Risk})
	s.errMu.Lock()
	defer s.errMu.Unlock()
	s.lastErr = ""
	if err != nil {
		s.lastErr = s.o.Redactor.String(err.Error())
		s.o.Logger.WarnContext(ctx, "gesture not recorded", slog.String("error", s.lastErr))
	}
}

// Stop asks the session to stop; Wait does the work.
func (s *Session) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Wait blocks until the person stops (or ctx ends), then compiles, seals
// and evaluates the demonstration. It closes the session.
func (s *Session) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-ctx.Done():
		s.Stop()
	case <-s.stop:
	}
	s.result, s.err = s.finish(ctx)
	close(s.done)
	// Shutdown waits for the stop request's answer to be written.
	s.closeServer()
	return s.result, s.err
}

func (s *Session) finish(ctx context.Context) (*Result, error) {
	if snap, err := s.srv.Snapshot(ctx, s.id); err == nil {
		s.rec.Screen(snap)
	}
	s.parkCancel()
	<-s.parked
	s.surf.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	d, err := s.rec.Demonstration()
	if err != nil {
		return nil, err
	}
	co := s.o.Compile
	co.Open, co.BaseURL, co.Redactor, co.Logger = s.o.Open, s.o.BaseURL, s.o.Redactor, s.o.Logger
	co.Secrets = layered{first: co.Secrets, typed: s.rec.typedSecrets()}
	return Compile(ctx, d, co)
}

func (s *Session) closeServer() {
	if err := s.srv.Close(); err != nil {
		s.o.Logger.Debug("close the recording page", slog.Any("error", err))
	}
}

// Close stops the session without compiling.
func (s *Session) Close() {
	select {
	case <-s.done:
		return
	default:
	}
	s.parkCancel()
	<-s.parked
	s.surf.Close()
	s.closeServer()
}

// typedSecrets copies the secret values typed (memory only).
func (r *Recording) typedSecrets() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for k, v := range r.typed {
		out[k] = v
	}
	return out
}

// layered resolves a secret from the store first, else from what the
// person typed into its field.
type layered struct {
	first runtime.SecretSource
	typed map[string]string
}

func (l layered) Secret(ref string) (string, error) {
	if l.first != nil {
		if v, err := l.first.Secret(ref); err == nil {
			return v, nil
		}
	}
	if v, ok := l.typed[ref]; ok {
		return v, nil
	}
	return "", errors.New("secret " + ref + " is not set and was not typed in the recording")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
