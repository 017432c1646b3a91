package mockapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// controlError is the JSON body of a refused control request. Field names
// the offending request field ("fault", "count", "variant" or "body").
type controlError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// decodeControl decodes one JSON object with no unknown fields into dst.
func decodeControl(r *http.Request, dst any) *controlError {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &controlError{Error: fmt.Sprintf("%s: want a JSON %s", typeErr.Field, typeErr.Type), Field: typeErr.Field}
		}
		return &controlError{Error: "body: invalid JSON object: " + err.Error(), Field: "body"}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &controlError{Error: "body: want exactly one JSON object", Field: "body"}
	}
	return nil
}

// handleArm answers POST /_control/arm {"fault": NAME, "count": N, "after": M}:
// the fault lets M eligible requests through, then fires N times.
func (s *Server) handleArm(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fault *string `json:"fault"`
		Count *int    `json:"count"`
		After int     `json:"after"`
	}
	if cerr := decodeControl(r, &req); cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	var cerr *controlError
	switch {
	case req.Fault == nil:
		cerr = &controlError{Error: "fault: required", Field: "fault"}
	case !knownFault(*req.Fault):
		cerr = &controlError{Error: fmt.Sprintf("fault: unknown fault %q; want one of %s", *req.Fault, strings.Join(faultNames, ", ")), Field: "fault"}
	case req.Count == nil:
		cerr = &controlError{Error: "count: required (-1 forever, 0 disarms, N > 0 fires N times)", Field: "count"}
	case *req.Count < -1:
		cerr = &controlError{Error: fmt.Sprintf("count: %d is below -1 (-1 forever, 0 disarms, N > 0 fires N times)", *req.Count), Field: "count"}
	case req.After < 0:
		cerr = &controlError{Error: fmt.Sprintf("after: %d is negative (the number of eligible requests to let through first)", req.After), Field: "after"}
	}
	if cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	s.arm(*req.Fault, *req.Count, req.After)
	s.logger.Info("fault armed", "fault", *req.Fault, "count", *req.Count, "after", req.After)
	writeJSON(w, http.StatusOK, s.stateSnapshot())
}

// handleVariant answers POST /_control/variant {"variant": "a"|"b"|"c"}.
func (s *Server) handleVariant(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Variant *string `json:"variant"`
	}
	if cerr := decodeControl(r, &req); cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	if req.Variant == nil || !validVariant(*req.Variant) {
		got := "missing"
		if req.Variant != nil {
			got = fmt.Sprintf("%q", *req.Variant)
		}
		writeJSON(w, http.StatusBadRequest, controlError{
			Error: fmt.Sprintf("variant: %s; want %q, %q or %q", got, VariantA, VariantB, VariantC),
			Field: "variant",
		})
		return
	}
	s.setVariant(*req.Variant)
	s.logger.Info("variant set", "variant", *req.Variant)
	writeJSON(w, http.StatusOK, s.stateSnapshot())
}

// handleReset answers POST /_control/reset: faults, sessions, ledger,
// tokens, counters and the notice are cleared and the variant goes back to
// Options.Variant.
func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	s.resetState()
	s.logger.Info("state reset")
	writeJSON(w, http.StatusOK, s.stateSnapshot())
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.stateSnapshot())
}

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Entries []LedgerEntry `json:"entries"`
	}{s.ledgerSnapshot()})
}
