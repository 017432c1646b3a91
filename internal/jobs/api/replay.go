package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/jobs"
)

// The warm engine: `cua replay --engine URL` hands a run to a running
// `cua serve` through two routes. GET /v1/capabilities/{ref} says what the
// engine's catalog holds under ref (its content hash and which inputs are
// sensitive), so the CLI can refuse, before it sends anything, a
// sensitive input given as a value and a file whose content the engine
// does not hold. POST /v1/replay takes the same body as POST /v1/runs and
// submits it the same way (the queue's checks, idempotency keys, the
// caller recorded as submitted_by), so the run is a queued run like any
// other, worked by serve's embedded workers on their warm sessions; it
// answers once the job is final, with the job and the run's record.

// maxRecord bounds a run record read back from the evidence tree.
const maxRecord = 16 << 20

// replayPoll is how often a synchronous replay looks at its job: the
// latency it adds after the run ends.
const replayPoll = 10 * time.Millisecond

// maxReplayWait bounds a synchronous replay's request: the queue's job
// timeout bounds the run itself.
const maxReplayWait = 2 * time.Hour

// Engine makes the handler answer the warm engine's routes: caps is the
// catalog the workers run from, dataDir the evidence tree they write
// (<dataDir>/runs/<run-id>/record.json), "" when the records live
// elsewhere (the answer then carries the job's result only).
func (h *Handler) Engine(caps jobs.Capabilities, dataDir string) {
	h.caps, h.dataDir = caps, dataDir
	h.mux.HandleFunc("GET /v1/capabilities/{ref}", h.capability)
	h.mux.HandleFunc("POST /v1/replay", h.replay)
}

// CapabilityInfo is what GET /v1/capabilities/{ref} answers.
type CapabilityInfo struct {
	// Ref is the capability's id@version; ContentHash its sealed content.
	Ref         string      `json:"ref"`
	ContentHash string      `json:"content_hash"`
	Inputs      []InputInfo `json:"inputs"`
}

// InputInfo is one declared input: a sensitive one is given only as a
// secret reference (input_secrets), never as a value.
type InputInfo struct {
	Name      string `json:"name"`
	Sensitive bool   `json:"sensitive"`
}

// ReplayResult is what POST /v1/replay answers once the job is final: the
// job (its result, state, errors) and the run's record as the run wrote
// it (record.json), absent when the engine cannot read it.
type ReplayResult struct {
	Job    *jobs.Job       `json:"job"`
	Record json.RawMessage `json:"record,omitempty"`
}

func (h *Handler) capability(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("ref")
	l, _, err := h.caps.Resolve(r.Context(), ref)
	if err != nil || l == nil || l.Capability == nil {
		writeError(w, http.StatusNotFound, "ref", "ref: "+ref+" is not in this engine's catalog (cua catalog add FILE on the engine)")
		return
	}
	info := CapabilityInfo{Ref: l.Capability.Ref(), ContentHash: l.Hash, Inputs: []InputInfo{}}
	for _, in := range l.Capability.Inputs {
		info.Inputs = append(info.Inputs, InputInfo{Name: in.Name, Sensitive: in.Sensitive})
	}
	writeJSON(w, http.StatusOK, info)
}

// replay submits the body as POST /v1/runs does, then waits for the job.
// A caller that goes away before the job ends cancels it (as ^C cancels a
// local cua replay), unless the job was an earlier one found by its
// idempotency key.
func (h *Handler) replay(w http.ResponseWriter, r *http.Request) {
	var a jobs.RunArgs
	if !decode(w, r, "run", &a) {
		return
	}
	// Read the body to its end: only then does the server watch the
	// connection and end the request's context when the caller goes.
	_, _ = io.Copy(io.Discard, r.Body)
	a.SubmittedBy = callerOf(r) // never the body's
	j, err := h.q.Submit(r.Context(), a)
	if errors.Is(err, jobs.ErrRefused) {
		field, _, _ := strings.Cut(err.Error(), ":")
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "submit failed")
		return
	}
	// The server's read and write timeouts are for ordinary requests; this
	// one lasts as long as its run (a read deadline passing would cancel
	// the request's context, and with it the job).
	rc, until := http.NewResponseController(w), time.Now().Add(maxReplayWait)
	_, _ = rc.SetReadDeadline(until), rc.SetWriteDeadline(until)
	j, err = h.wait(r.Context(), j)
	if err != nil {
		if !j.Duplicate && r.Context().Err() != nil {
			_, _ = h.q.Cancel(context.WithoutCancel(r.Context()), j.ID)
		}
		writeError(w, http.StatusInternalServerError, "", "waiting for the run failed")
		return
	}
	res := ReplayResult{Job: j}
	if j.Result != nil {
		res.Record = h.record(j.Result.RunID)
	}
	writeJSON(w, http.StatusOK, res)
}

// wait polls the job until it is final or ctx ends.
func (h *Handler) wait(ctx context.Context, j *jobs.Job) (*jobs.Job, error) {
	t := time.NewTicker(replayPoll)
	defer t.Stop()
	for !j.Final() {
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
		next, err := h.q.Get(ctx, j.ID)
		if err != nil {
			return j, err
		}
		next.Duplicate, next.AlreadyRan = j.Duplicate, j.AlreadyRan
		j = next
	}
	return j, nil
}

// record is the run's record.json from the evidence tree, nil when there
// is none here (no data directory, a run worked elsewhere, a bad id).
func (h *Handler) record(runID string) json.RawMessage {
	if h.dataDir == "" || runID == "" || filepath.Base(runID) != runID || strings.HasPrefix(runID, ".") {
		return nil
	}
	raw, err := fsx.ReadFileNoFollow(filepath.Join(h.dataDir, "runs", runID, "record.json"), maxRecord)
	if err != nil || !json.Valid(raw) {
		return nil
	}
	return raw
}
