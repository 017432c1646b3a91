package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

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
