package launch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/anthropic"
	"github.com/cuahq/cua/internal/model/cassette"
	modelexec "github.com/cuahq/cua/internal/model/exec"
	"github.com/cuahq/cua/internal/model/openai"
)

// ModelSpec names the model a discovery talks to.
type ModelSpec struct {
	// Spec is openai[:ID], anthropic[:ID] or exec:COMMAND.
	Spec string
	// Getenv reads the provider's key and base URL (injected: launch never
	// reads the environment itself).
	Getenv func(string) string
	// LLMBase overrides an OpenAI-compatible base URL.
	LLMBase string
	// Cassette replays a recorded exploration instead (no network, no key);
	// Record records every exchange to a file. At most one of them.
	Cassette, Record string
	// Redact passes what a cassette stores through the run's redactor.
	Redact func(string) string
}

// ErrModelSpec marks a Spec that names no known model.
var ErrModelSpec = errors.New("unknown model")

// Model builds the model s names. A missing key is an error here, before
// any browser starts.
func Model(s ModelSpec) (m model.Model, err error) {
	if s.Cassette != "" {
		return cassette.Open(s.Cassette, cassette.WithRedact(s.Redact))
	}
	kind, id, _ := strings.Cut(s.Spec, ":")
	switch kind {
	case "openai":
		var cfg openai.Config
		if cfg, err = openai.FromEnv(s.Getenv, id, s.LLMBase); err == nil {
			m, err = openai.New(cfg)
		}
	case "anthropic":
		var cfg anthropic.Config
		if cfg, err = anthropic.FromEnv(s.Getenv, id, ""); err == nil {
			m, err = anthropic.New(cfg)
		}
	case "exec":
		fields := strings.Fields(id)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%w: exec:COMMAND names no command", ErrModelSpec)
		}
		m = modelexec.New(fields[0], fields[1:]...)
	default:
		return nil, fmt.Errorf("%w %q: want openai[:ID], anthropic[:ID] or exec:COMMAND", ErrModelSpec, s.Spec)
	}
	if err != nil || s.Record == "" {
		return m, err
	}
	return cassette.Record(m, s.Record, s.Redact), nil
}
