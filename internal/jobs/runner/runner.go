// Package runner runs a queued job's replay exactly the way `cua replay`
// does: pipeline.Replay, gated and indexed by the catalog, over sessions
// that launch opens (one Chromium per worker process and target, a fresh
// browser context per run; or a state-contract session).
//
// It owns that wiring for the queue's workers and nothing else: it never
// decides whether a run may be retried (package jobs does), never prints,
// and never reads flags or the environment (secrets come in a store the
// command made).
package runner

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
)

// Config is what every run of a worker shares.
type Config struct {
	// DataDir roots the evidence tree (<DataDir>/runs/<run-id>).
	DataDir string
	// Launch names the browser (Browser, CDPURL, Headful); Kind, BaseURL
	// and AllowedDomains come from each run.
	Launch  launch.Options
	Secrets runtime.SecretSource
	// Logger returns a run's logger over its redactor (so secrets a run
	// resolves are redacted from what it logs); nil discards.
	Logger func(*redact.Redactor) *slog.Logger
	// WarmTTL keeps warm sessions: a web run that ended well leaves its
	// browser context open, signed on, for the next run of the same
	// capability on the same target, for at most WarmTTL idle (keep it
	// under the application's session timeout). 0: a fresh context per run.
	WarmTTL time.Duration
	// MaxWarm bounds the warm sessions kept per capability and target
	// (default 1; a worker sets its concurrency).
	MaxWarm int
	// AllowOrigins are the origins (scheme://host[:port], the worker's
	// --allow-origin) a run's base URL may name besides the full origins
	// its sealed capability declares in policy.allowed_domains. Any other
	// base URL is refused before a browser opens (DESIGN invariant 17: the
	// holder of the secrets decides where they are typed, never the
	// caller who picked the base URL).
	AllowOrigins []string
	// Park, when set, parks a run that escalates (NEEDS_HUMAN) for up to
	// ParkTimeout instead of ending it: the worker's session relay, which
	// keeps the session for an operator reaching it from any console.
	Park        runtime.Parker
	ParkTimeout time.Duration
}

// Runner is a jobs.Runner. Safe for concurrent use.
type Runner struct {
	cfg  Config
	base context.Context
	// parks ends with EndParks: every park of the runner's runs ends.
	parks    context.Context
	endParks context.CancelFunc

	mu        sync.Mutex
	launchers map[string]*launch.Launcher
	pools     map[string]*launch.Pool
}

var _ jobs.Runner = (*Runner)(nil)

// New returns a Runner whose browsers live as long as ctx (or until Close).
func New(ctx context.Context, cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = func(*redact.Redactor) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
	}
	parks, end := context.WithCancel(context.WithoutCancel(ctx))
	return &Runner{cfg: cfg, base: ctx, parks: parks, endParks: end, launchers: map[string]*launch.Launcher{}, pools: map[string]*launch.Pool{}}
}

// Run replays req through pipeline.Replay. A base URL whose origin the
// capability does not declare and the worker does not allow ends the run
// FAILED with DOMAIN_NOT_ALLOWED before anything opens.
func (r *Runner) Run(ctx context.Context, req jobs.Request) (*domain.RunRecord, error) {
	if err := r.checkOrigin(req); err != nil {
		return r.Refuse(ctx, req, evidence.CheckOrigin, err)
	}
	c := req.Capability.Capability
	key, l, err := r.launcher(c.Surface, req.BaseURL, c.Policy.AllowedDomains)
	if err != nil {
		return nil, err
	}
	red := redact.New()
	var secrets runtime.SecretSource
	var resolved *resolvedSecrets
	if r.cfg.Secrets != nil {
		resolved = &resolvedSecrets{src: r.cfg.Secrets}
		secrets = resolved
	}
	o := replay.Options{Capability: req.Capability, Inputs: req.Inputs, BaseURL: req.BaseURL, Redactor: red,
		DataDir: r.cfg.DataDir, RunID: req.RunID, Logger: r.cfg.Logger(red), ReleasedGates: req.ReleasedGates,
		Secrets: secrets, EvidenceLevel: req.Evidence}
	if r.cfg.Park != nil {
		o.Park = runParker{r: r, spec: c.Inputs, inputs: req.Inputs}
		o.ParkTimeout = r.cfg.ParkTimeout
	}
	p := pipeline.ReplayParams{Run: o, Library: req.Library, Open: l.Open}
	if c.Surface == domain.SurfaceWeb && r.cfg.WarmTTL > 0 {
		p.Pool = &runSessions{pool: r.pool(key+"\x00"+c.ID, l), red: red, resolved: resolved}
	}
	if req.Gate != nil {
		p.Gate = req.Gate
	}
	return pipeline.Replay(ctx, p)
}

// resolvedSecrets is a run's secret source that remembers the values it
// resolved, so the session they were typed into keeps them.
type resolvedSecrets struct {
	src  runtime.SecretSource
	mu   sync.Mutex
	vals []string
}

func (s *resolvedSecrets) Secret(ref string) (string, error) {
	v, err := s.src.Secret(ref)
	if err == nil && v != "" {
		s.mu.Lock()
		s.vals = append(s.vals, v)
		s.mu.Unlock()
	}
	return v, err
}

func (s *resolvedSecrets) values() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.vals)
}

// runSessions lends one run a warm session. Secrets belong to the session:
// a session signed on by an earlier run still shows what that sign-on
// typed (the operator id in a banner) though this run, starting warm,
// resolves nothing, so Take registers every secret resolved in the
// session with the run's redactor before the run writes anything (every
// sink: record, events, logs, screenshots), and Return adds the secrets
// this run resolved to the session's.
type runSessions struct {
	pool     *launch.Pool
	red      *redact.Redactor
	resolved *resolvedSecrets
}

func (rs *runSessions) Take(ctx context.Context) (surface.Surface, bool, error) {
	s, warm, err := rs.pool.Take(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, v := range rs.pool.Secrets(s) {
		rs.red.RegisterLiteral(v)
	}
	return s, warm, nil
}

func (rs *runSessions) Return(s surface.Surface, rec *domain.RunRecord) {
	rs.pool.Remember(s, rs.resolved.values()...)
	rs.pool.Return(s, rec)
}

// launcher returns the launcher of one target, starting its browser under
// the runner's context the first time (a browser started under a job's
// context would die with the job).
func (r *Runner) launcher(kind domain.Surface, baseURL string, allowed []string) (string, *launch.Launcher, error) {
	key := string(kind) + "\x00" + baseURL + "\x00" + strings.Join(allowed, ",")
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.launchers[key]; ok {
		return key, l, nil
	}
	o := r.cfg.Launch
	o.Kind, o.BaseURL, o.AllowedDomains = kind, baseURL, allowed
	if o.Logger == nil {
		o.Logger = r.cfg.Logger(redact.New())
	}
	l := launch.New(o)
	if kind != domain.SurfaceState {
		s, err := l.Open(r.base)
		if err != nil {
			return "", nil, err
		}
		s.Close()
	}
	r.launchers[key] = l
	return key, l, nil
}

// pool returns the warm sessions of one capability on one target. Their
// browser contexts live under the runner's context, not a job's.
func (r *Runner) pool(key string, l *launch.Launcher) *launch.Pool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pools[key]; ok {
		return p
	}
	p := launch.NewPool(func(context.Context) (surface.Surface, error) { return l.Open(r.base) },
		launch.PoolOptions{TTL: r.cfg.WarmTTL, MaxIdle: r.cfg.MaxWarm})
	r.pools[key] = p
	return p
}

// Close closes every browser the runner started; runs must be over.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, p := range r.pools {
		p.Close()
		delete(r.pools, k)
	}
	for k, l := range r.launchers {
		l.Close()
		delete(r.launchers, k)
	}
}
