package observecmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/launch"
)

// mirrorEvery is how often an object store's new runs are fetched while
// the observer serves.
const mirrorEvery = 10 * time.Second

// storeDir is where the runs of the --evidence store are served from: a
// file:// store's own directory, else a private temp directory mirroring
// the store (every whole run, refreshed every mirrorEvery until stop).
// With RUN, only that run is served (and, from an object store, fetched).
func storeDir(ctx context.Context, o *observeOptions) (dir, only string, stop func(), err error) {
	if !o.All && !runIDPattern.MatchString(o.Run) {
		return "", "", nil, cmdutil.FlagErrorf("RUN %q: not a run id (with --evidence, RUN names a run in the store)", o.Run)
	}
	st, err := cmdutil.OpenEvidence(ctx, o.Evidence, launch.DataDir(o.DataDir, o.Env))
	if err != nil {
		return "", "", nil, err
	}
	if st.Dir() != "" {
		_ = st.Close()
		if !o.All {
			if fi, err := os.Stat(filepath.Join(st.Dir(), o.Run)); err != nil || !fi.IsDir() {
				return "", "", nil, cmdutil.FlagErrorf("RUN %q: no such run in %s", o.Run, o.Evidence)
			}
		}
		return st.Dir(), o.Run, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "cua-observe-*")
	if err != nil {
		_ = st.Close()
		return "", "", nil, fmt.Errorf("observe: temp dir: %w", err)
	}
	cleanup := func() { _ = st.Close(); _ = os.RemoveAll(tmp) }
	if !o.All {
		if _, err := st.Fetch(ctx, o.Run, tmp); err != nil {
			cleanup()
			return "", "", nil, cmdutil.FlagErrorf("RUN %q: %v", o.Run, err)
		}
		return tmp, o.Run, cleanup, nil
	}
	if err := st.Mirror(ctx, tmp); err != nil {
		slog.WarnContext(ctx, "observe: some runs of the evidence store were not fetched", slog.Any("error", err))
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(mirrorEvery)
		defer t.Stop()
		for {
			select {
			case <-mctx.Done():
				return
			case <-t.C:
				if err := st.Mirror(mctx, tmp); err != nil && mctx.Err() == nil {
					slog.WarnContext(mctx, "observe: some runs of the evidence store were not fetched", slog.Any("error", err))
				}
			}
		}
	}()
	return tmp, "", func() { cancel(); <-done; cleanup() }, nil
}
