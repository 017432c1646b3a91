package cli

import (
	"context"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/surface"
)

// discoverParams, discoverCompileEval and newRunID keep demo.go building
// until the demo's stages move to internal/demo (issue 10), which calls
// pipeline.Run itself; delete this file then.
type discoverParams struct {
	Agent                          agent.Config
	Open                           func() (surface.Surface, error)
	Out, ID, Version, ProvenanceID string
	CompiledAt                     func() time.Time
	LibraryDir                     string
	Eval                           bool
}

func discoverCompileEval(ctx context.Context, p discoverParams) (*pipeline.Result, error) {
	return pipeline.Run(ctx, pipeline.Params{Agent: p.Agent, Open: func(context.Context) (surface.Surface, error) { return p.Open() },
		Out: p.Out, ID: p.ID, Version: p.Version, ProvenanceID: p.ProvenanceID, CompiledAt: p.CompiledAt, LibraryDir: p.LibraryDir, Eval: p.Eval})
}

func newRunID() string { return pipeline.NewRunID() }
