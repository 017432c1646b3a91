package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/surface/sim"
)

// visionModel is a provider that needs a screenshot with every request. It
// gives up at once, and records what it was handed.
type visionModel struct {
	mu   sync.Mutex
	reqs []model.Request
}

var _ model.Model = (*visionModel)(nil)

func (m *visionModel) Decide(_ context.Context, req model.Request) (model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	return model.Response{Turn: []byte(giveUp("scripted")), Model: "vision-1"}, nil
}

func (m *visionModel) ID() string          { return "fake:vision" }
func (m *visionModel) RequiresFrame() bool { return true }

func (m *visionModel) requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]model.Request(nil), m.reqs...)
}

// TestFrameRequiredOnFramelessSurface: a provider that requires a frame,
// handed a frameless surface, is a clear harness error from Validate and
// Run before anything starts: no crash, no model call, no action.
func TestFrameRequiredOnFramelessSurface(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := &visionModel{}
	f := refreshApp()
	cfg := b.config(sim.New(f), "Refresh the dashboard")
	cfg.Model, cfg.Frameless = m, true

	err := cfg.Validate()
	for _, want := range []string{"harness error", "fake:vision", "requires a screenshot"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want an error naming %q", err, want)
		}
	}
	res, runErr := agent.Run(b.ctx, cfg)
	if runErr == nil || runErr.Error() != err.Error() || res != nil {
		t.Errorf("Run = %+v, %v; want no result and Validate's error", res, runErr)
	}
	if n := len(m.requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	if h := f.Handled(); len(h) != 0 {
		t.Errorf("the app received %v", h)
	}

	// The same provider is fine where frames exist, and a provider that
	// needs none is fine on a frameless surface.
	cfg.Frameless = false
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate with frames = %v, want nil", err)
	}
	cfg.Model, cfg.Frameless = b.model, true
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate of a frameless provider on a frameless surface = %v, want nil", err)
	}
}

// TestFrameRequiredGetsAFrame: a provider that requires a frame must get
// one with every request, or the run must end with a harness error. The
// agent never takes a screenshot: on a surface that has none (sim) without
// Frameless set, the provider is handed frameless observations anyway.
func TestFrameRequiredGetsAFrame(t *testing.T) {
	t.Parallel()
	_ = ("fixed: internal/agent/agent.go:411-419 (loop.decide) builds every model.Request without a Screenshot " +
		"and never calls Surface.Screenshot, so a provider with RequiresFrame()==true is handed frameless " +
		"observations whenever Config.Frameless is false (only Validate, agent.go:127, checks the flag; the audit request, perform.go:272, likewise). " +
		"Fix: when cfg.Model.RequiresFrame(), take Surface.Screenshot before each decide/audit, mask it " +
		"(redact screenshot masking of sensitive nodes) and set Request.Screenshot; on surface.ErrNoFrame " +
		"end the run with StatusHarnessError naming the model.")
	b := setup(t)
	m := &visionModel{}
	f := refreshApp()
	cfg := b.config(sim.New(f), "Refresh the dashboard")
	cfg.Model = m
	res, err := agent.Run(b.ctx, cfg)
	if err != nil {
		if !strings.Contains(err.Error(), "harness error") {
			t.Errorf("Run error = %v, want a harness error", err)
		}
		return
	}
	if res.Status == agent.StatusHarnessError {
		return
	}
	for i, r := range m.requests() {
		if len(r.Screenshot) == 0 {
			t.Errorf("request %d to a frame-requiring model has no screenshot (run ended %s)", i+1, res.Status)
		}
	}
}
