package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/surface"
)

// Base is the bundle handed to everything that runs, in the manner of
// river's baseservice.Archetype: where it logs, what time it is, how it
// names a run. Inject it; nothing in a run reads the clock or a logger
// from anywhere else.
type Base struct {
	Logger *slog.Logger
	Now    func() time.Time
	// NewID names a run when its caller gives no id; nil leaves the id
	// empty (see NewRunID).
	NewID func() string
}

// WithDefaults returns b with a discarding logger and time.Now where unset.
func (b Base) WithDefaults() Base {
	if b.Logger == nil {
		b.Logger = slog.New(slog.DiscardHandler)
	}
	if b.Now == nil {
		b.Now = time.Now
	}
	return b
}

// NewRunID returns an id source of the form r<UTC time>-<8 hex digits>,
// the form cua's commands use, timed by now.
func NewRunID(now func() time.Time) func() string {
	return func() string {
		var b [4]byte
		_, _ = rand.Read(b[:])
		return "r" + now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
	}
}

// RunConfig describes one run. Only Surface-independent parts are here:
// the surface and the policy come with each dispatcher (Run.Dispatcher).
type RunConfig struct {
	Base
	// ID is the run id; empty takes Base.NewID() when it is set.
	ID string
	// BaseURL is the target's base URL; it gives the default allowlist and
	// the entry origin. It is not validated here: an engine that must
	// record a bad base URL as a failed run can.
	BaseURL string
	// Actor is who acts (automation, agent); default automation.
	Actor domain.Actor
	// Holder is the lease holder to act as; default "<actor>:<id>".
	Holder string
	// Lease is the session's lease; default a new lease held by Holder.
	Lease    *hitl.Lease
	Redactor *redact.Redactor
	Secrets  SecretSource
	// SecretLog collects the secrets resolved in the run; default a new one.
	SecretLog *SecretLog
	// Evidence is the caller's evidence sink, injected; the caller closes
	// it. When nil and DataDir is set, NewRun opens
	// <DataDir>/runs/<ID>/ (evidence.Open) and Close closes it.
	Evidence *evidence.Bundle
	DataDir  string
	// EvidenceLevel is which screenshots the run keeps (see
	// StepScreenshot); "" is decisive.
	EvidenceLevel domain.EvidenceLevel
}

// Run holds what every part of one run shares: the Base, the run id, the
// lease and holder, the redactor, the secrets and their log, and the
// evidence sink. Build it with NewRun; it is safe for concurrent use as
// far as its parts are (Lease, SecretLog, Bundle and Redactor are).
type Run struct {
	Base
	ID        string
	Actor     domain.Actor
	Holder    string
	Lease     *hitl.Lease
	Redactor  *redact.Redactor
	Secrets   SecretSource
	SecretLog *SecretLog
	// Evidence is nil when the run writes none.
	Evidence *evidence.Bundle

	baseURL      string
	ownsEvidence bool
	// shot is the newest step screenshot (StepScreenshot), and steps the
	// number of the newest step result it was asked to picture; awaiting
	// lists the irreversible steps whose screen after is not pictured yet.
	shot     lastShot
	steps    int
	awaiting []irreversibleStep
	// level is the run's evidence level, parks counts the screens parked
	// on, and observed holds the node keys of the previous step's
	// observation (StepObservation).
	level    domain.EvidenceLevel
	parks    int
	observed map[string]bool
	// failShot is the screenshot of the newest failed step (reason
	// failure), which the run's end does not picture again.
	failShot string
}

// NewRun fills cfg's defaults and returns the run. Its only error is an
// evidence directory that cannot be opened.
func NewRun(cfg RunConfig) (*Run, error) {
	cfg.Base = cfg.Base.WithDefaults()
	if cfg.ID == "" && cfg.NewID != nil {
		cfg.ID = cfg.NewID()
	}
	if cfg.Actor == "" {
		cfg.Actor = domain.ActorAutomation
	}
	if cfg.Holder == "" {
		cfg.Holder = string(cfg.Actor) + ":" + cfg.ID
	}
	if cfg.Lease == nil {
		cfg.Lease = hitl.NewLease(cfg.Holder)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = redact.New()
	}
	if cfg.SecretLog == nil {
		cfg.SecretLog = &SecretLog{}
	}
	r := &Run{Base: cfg.Base, ID: cfg.ID, Actor: cfg.Actor, Holder: cfg.Holder, Lease: cfg.Lease,
		Redactor: cfg.Redactor, Secrets: cfg.Secrets, SecretLog: cfg.SecretLog, Evidence: cfg.Evidence, baseURL: cfg.BaseURL, level: cfg.EvidenceLevel}
	if r.level == "" {
		r.level = domain.EvidenceDecisive
	}
	if r.Evidence == nil && cfg.DataDir != "" {
		b, err := evidence.Open(cfg.DataDir, cfg.ID, cfg.Redactor)
		if err != nil {
			return nil, err
		}
		r.Evidence, r.ownsEvidence = b, true
	}
	return r, nil
}

// Close closes the evidence sink when NewRun opened it; an injected one is
// its caller's to close. Idempotent.
func (r *Run) Close() error {
	if r.ownsEvidence && r.Evidence != nil {
		return r.Evidence.Close()
	}
	return nil
}

// Domains is the allowlist of a run: declared when there is one, else the
// base URL's host.
func (r *Run) Domains(declared []string) []string {
	if len(declared) > 0 {
		return declared
	}
	u, err := url.Parse(r.baseURL)
	if err != nil {
		return nil
	}
	return []string{u.Hostname()}
}

// EntryOrigin is the base URL's scheme://host[:port].
func (r *Run) EntryOrigin() string {
	u, err := url.Parse(r.baseURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Dispatcher returns a dispatcher on s under pol, acting as the run's
// holder and recording into the run's evidence.
func (r *Run) Dispatcher(s surface.Surface, pol *policy.Engine) (*Dispatcher, error) {
	if s == nil {
		return nil, errors.New("runtime: run has no surface")
	}
	var events EventSink
	if r.Evidence != nil {
		events = r.Evidence
	}
	var before func(context.Context, *Dispatcher, string) string
	if r.Evidence != nil {
		before = r.BeforeScreenshot
	}
	return New(Config{
		Surface: s, Policy: pol, Lease: r.Lease, Holder: r.Holder, Secrets: r.Secrets, Redactor: r.Redactor,
		Events: events, Now: r.Now, Logger: r.Logger, Actor: r.Actor, SecretLog: r.SecretLog, BeforeIrreversible: before,
	})
}

// Emit records an event of the run by its actor; step is empty for a
// run-level event. A dropped event is logged, never fatal.
func (r *Run) Emit(step string, p evidence.Payload) {
	if r.Evidence == nil {
		return
	}
	if err := r.Evidence.Append(evidence.NewEvent(r.Now(), r.Actor, step, p)); err != nil {
		r.Logger.Warn("evidence event dropped", slog.String("type", p.EventType()), slog.Any("error", err))
	}
}

// AppendLine writes one redacted JSON line to a file of the run's evidence
// (see evidence.Bundle.AppendLine); nothing when the run writes none.
func (r *Run) AppendLine(name string, v any) error {
	if r.Evidence == nil {
		return nil
	}
	if err := r.Evidence.AppendLine(name, v); err != nil {
		return fmt.Errorf("run %s: %w", r.ID, err)
	}
	return nil
}
