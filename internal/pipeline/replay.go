package pipeline

import (
	"context"
	"fmt"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
)

// ReplayParams is one replay of a sealed capability.
type ReplayParams struct {
	// Run is the replay without Library and Surface, which Replay fills.
	// Run.Capability is required.
	Run replay.Options
	// LibraryDir holds the capabilities Run.Capability may call.
	LibraryDir string
	// Open opens the session the run acts on; it is called only once the
	// inputs bind and every called capability resolves.
	Open Opener
}

// Replay runs p.Run.Capability and returns its record, messages redacted.
//
// Inputs are bound, and every prerequisite and remedy is resolved, sealed
// and pinned, before a surface opens: a bad input or a missing, unsealed
// or tampered sub-capability costs no surface and no dispatch, and still
// leaves a run record (FAILED with its failure code). The error is
// non-nil only when the run could not be made or recorded: the library
// does not load, the surface does not open, evidence is unwritable.
func Replay(ctx context.Context, p ReplayParams) (*domain.RunRecord, error) {
	o := p.Run
	if o.Capability == nil {
		return nil, fmt.Errorf("replay: no capability")
	}
	if _, err := capability.BindInputs(o.Capability.Capability, o.Inputs); err != nil {
		return record(ctx, replay.Options{Capability: o.Capability, Inputs: o.Inputs, BaseURL: o.BaseURL,
			Redactor: o.Redactor, DataDir: o.DataDir, RunID: o.RunID, Logger: o.Logger})
	}
	lib, err := replay.LoadDir(p.LibraryDir)
	if err != nil {
		return nil, err
	}
	if err := lib.Add(o.Capability); err != nil {
		return nil, err
	}
	if err := replay.Preflight(o.Capability, lib); err != nil {
		return record(ctx, replay.Options{Capability: o.Capability, Library: lib, Inputs: o.Inputs, BaseURL: o.BaseURL,
			Redactor: o.Redactor, DataDir: o.DataDir, RunID: o.RunID, Logger: o.Logger})
	}
	sess, err := p.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	o.Library, o.Surface = lib, sess
	return record(ctx, o)
}

// record runs o and redacts the record's messages.
func record(ctx context.Context, o replay.Options) (*domain.RunRecord, error) {
	rec, err := replay.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	redactMessages(rec, o.Redactor)
	return rec, nil
}

// SealPinned seals the capability file at path, pinning the content hash
// of every capability it calls as found in the library directory dir, and
// returns its content hash (see capability.SealPinned).
func SealPinned(path, dir string) (string, error) {
	return capability.SealPinned(path, func(ref string) (*capability.Loaded, error) {
		lib, err := replay.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		l, err := lib.Lookup(ref)
		if err != nil {
			return nil, fmt.Errorf("%w (library %s)", err, dir)
		}
		return l, nil
	})
}
