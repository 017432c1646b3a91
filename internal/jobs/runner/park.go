package runner

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
)

// maskedInput is how a parked run's queue row shows a sensitive input.
const maskedInput = "[sensitive]"

// maxScreen bounds a parked run's screen summary.
const maxScreen = 400

// runParker parks one run in the worker's parker (its session relay),
// adding what the queue row shows of it: the run's inputs (a sensitive one
// masked, every value redacted) and the headings of the screen it parked
// on, redacted. A park ends when the runner stops parking (EndParks: the
// worker drains), and the run then ends NEEDS_HUMAN as an unparked one.
type runParker struct {
	r      *Runner
	spec   []domain.InputSpec
	inputs map[string]string
}

func (p runParker) Park(ctx context.Context, pk runtime.Parked) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.r.parks, cancel)
	defer stop()
	if pk.Waiting.Inputs == nil && pk.Run != nil {
		pk.Waiting.Inputs = maskInputs(p.spec, p.inputs, pk.Run.Redactor)
	}
	if pk.Waiting.Screen == "" && pk.Surface != nil && pk.Run != nil {
		if snap, err := pk.Surface.Observe(ctx); err == nil {
			pk.Waiting.Screen = screenSummary(snap, pk.Run.Redactor)
		}
	}
	return p.r.cfg.Park.Park(ctx, pk)
}

// EndParks ends every park of the runner's runs, now and later: a worker
// that drains calls it, so no run waits for a person past the stop.
func (r *Runner) EndParks() { r.endParks() }

// maskInputs returns the run's inputs as a queue row may show them.
func maskInputs(spec []domain.InputSpec, in map[string]string, red *redact.Redactor) map[string]string {
	if len(in) == 0 {
		return nil
	}
	sensitive := map[string]bool{}
	for _, s := range spec {
		sensitive[s.Name] = s.Sensitive
	}
	out := make(map[string]string, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if sensitive[k] {
			out[k] = maskedInput
			continue
		}
		out[k] = red.String(in[k])
	}
	return out
}

// screenSummary names the screen by its headings (the first five),
// redacted, at most maxScreen bytes.
func screenSummary(s *domain.UiSnapshot, red *redact.Redactor) string {
	if s == nil {
		return ""
	}
	var hs []string
	for _, n := range s.Nodes {
		if n.Role == "heading" && strings.TrimSpace(n.Name) != "" && len(hs) < 5 {
			hs = append(hs, strings.TrimSpace(n.Name))
		}
	}
	out := strings.Join(hs, "; ")
	if red != nil {
		out = red.String(out)
	}
	if len(out) > maxScreen {
		out = out[:maxScreen]
	}
	return out
}
