package jobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/riverqueue/river/riverlog"
	"riverqueue.com/riverui"
)

// UI returns River's own web UI (riverqueue.com/riverui) over this queue,
// mounted under prefix (for example "/river"), read-only: GET and HEAD
// pass, every other method (cancel, retry, delete, pause) is answered 405
// before River sees it, so the UI can show the queue but never change it.
// Its background services run until ctx ends. The caller gates access
// (package api: Host, Origin, token).
func (q *Queue) UI(ctx context.Context, prefix string, logger *slog.Logger) (http.Handler, error) {
	h, err := riverui.NewHandler(&riverui.HandlerOpts{Endpoints: q.endpoints, Logger: logger, Prefix: prefix,
		JobListHideArgsByDefault: true})
	if err != nil {
		return nil, fmt.Errorf("river ui: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("river ui: %w", err)
	}
	return readOnly(h), nil
}

func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the River UI is read-only here", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// jobLogMiddleware keeps what [jobLog] says of an attempt in its job's
// metadata ("river:log"), which River UI shows as the attempt's log: what
// the run was, how it ended, "needs a person: iv-…" when it was handed to
// one. Text lines without the time (River records when the attempt ran).
func jobLogMiddleware() *riverlog.Middleware {
	return riverlog.NewMiddleware(func(w io.Writer) slog.Handler {
		return slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
				return slog.Attr{}
			}
			return a
		}})
	}, &riverlog.MiddlewareConfig{MaxSizeBytes: 16 << 10, MaxTotalBytes: 64 << 10})
}

// jobLog is the attempt's log River UI shows (see jobLogMiddleware); it
// writes nothing outside a job. Only what the job's output holds anyway
// goes there: run ids, statuses, intervention ids and their reasons.
func jobLog(ctx context.Context) *slog.Logger {
	if l, ok := riverlog.LoggerSafely(ctx); ok {
		return l
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
