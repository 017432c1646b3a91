// Package api is the HTTP API of `cua serve`: submit a run, get one, list
// them, cancel one, as JSON over the run queue (package jobs), described by
// schema/jobs-api.openapi.json.
//
// Every request passes one gate before any route (tailscale's localapi
// manner): the Host must be the address the server listens on (no DNS
// rebinding), a request with an Origin must come from that same origin,
// and the bearer token must name a principal: the deployment's serve token
// (compared in constant time) is the service principal "serve-token", and
// a principal's own token is whoever [Authenticator] says holds it. The
// caller is what the API records: who resolved an intervention, who
// submitted a run. It owns routing, the gate and JSON errors; it never
// runs a capability itself.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/jobs"
)

// queue is what the API needs of a *jobs.Queue.
type queue interface {
	Submit(ctx context.Context, a jobs.RunArgs) (*jobs.Job, error)
	Get(ctx context.Context, id int64) (*jobs.Job, error)
	List(ctx context.Context, p jobs.ListParams) ([]*jobs.Job, error)
	Cancel(ctx context.Context, id int64) (*jobs.Job, error)
	Interventions(ctx context.Context, status string) ([]*jobs.Intervention, error)
	Intervention(ctx context.Context, id string) (*jobs.Intervention, error)
	ResolveIntervention(ctx context.Context, id string, r jobs.Resolution) (*jobs.Intervention, error)
}

// ServeToken is the service principal the deployment's serve token
// stands for: what the API records for a caller holding it.
const ServeToken = "serve-token"

// Authenticator tells who holds a principal's bearer token (the principal
// directory, as `cua serve` adapts it): the principal as it is recorded.
// Any error (an unknown, wrong, locked or disabled token) refuses the
// request with the same 401, which never says whether a name exists.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (who string, err error)
}

// Handler serves the API for one listen address. Safe for concurrent use
// once set up ([Handler.Principals], [Handler.TLS], [Handler.MountRiverUI]
// are called before serving).
type Handler struct {
	q      queue
	token  string
	auth   Authenticator
	scheme string // of the origin browsers send: http, or https with TLS
	port   string
	hosts  []string
	mux    *http.ServeMux
	ui     bool // River's UI is mounted: browsers sign in for a cookie

	caps    jobs.Capabilities // the warm engine's catalog (see [Handler.Engine])
	dataDir string            // where the engine's runs write their evidence
}

// New returns the API over q; addr is the host:port clients use (the
// listener's), token the bearer token every request must carry.
func New(q queue, addr, token string) (*Handler, error) {
	if token == "" {
		return nil, errors.New("api: a token is required")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("api: addr %q: %w", addr, err)
	}
	h := &Handler{q: q, token: token, scheme: "http", port: port, hosts: []string{addr}, mux: http.NewServeMux()}
	if host == "127.0.0.1" || host == "::1" || host == "localhost" {
		h.hosts = append(h.hosts, "localhost:"+port, "127.0.0.1:"+port, "[::1]:"+port)
	}
	h.mux.HandleFunc("POST /v1/runs", h.submit)
	h.mux.HandleFunc("GET /v1/runs", h.list)
	h.mux.HandleFunc("GET /v1/runs/{id}", h.get)
	h.mux.HandleFunc("POST /v1/runs/{id}/cancel", h.cancel)
	h.mux.HandleFunc("GET /v1/interventions", h.interventions)
	h.mux.HandleFunc("GET /v1/interventions/{iv}", h.intervention)
	h.mux.HandleFunc("POST /v1/interventions/{iv}/resolve", h.resolve)
	return h, nil
}

// Principals makes principals' own tokens open the API too, as whoever a
// says holds them; without it only the serve token does.
func (h *Handler) Principals(a Authenticator) { h.auth = a }

// TLS says the listener serves TLS with a certificate for names (DNS names
// or IPs): a request may address any of them with the listener's port, an
// Origin must be https, and the sign-in cookie is Secure.
func (h *Handler) TLS(names []string) {
	h.scheme = "https"
	for _, n := range names {
		h.hosts = append(h.hosts, net.JoinHostPort(n, h.port))
	}
}

// ServeHTTP is the gate: Host, Origin, token, then the route, which finds
// the caller in its request's context.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if !h.hostOK(r.Host) {
		writeError(w, http.StatusMisdirectedRequest, "host", "unknown host")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !h.originOK(o) {
		writeError(w, http.StatusForbidden, "origin", "cross-origin requests are refused")
		return
	}
	if h.ui && r.URL.Path == signinPath {
		h.signin(w, r)
		return
	}
	who, ok := h.caller(r)
	if !ok {
		if h.ui && strings.HasPrefix(r.URL.Path, RiverUIPrefix+"/") && r.Method == http.MethodGet {
			http.Redirect(w, r, signinPath, http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="cua"`)
		writeError(w, http.StatusUnauthorized, "token", "a valid bearer token is required")
		return
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, who)))
}

type callerKey struct{}

// callerOf is the principal the gate let r in as.
func callerOf(r *http.Request) string {
	who, _ := r.Context().Value(callerKey{}).(string)
	return who
}

// caller is who r's bearer token (or, with the UI mounted, the cookie a
// browser got by signing in with one) names.
func (h *Handler) caller(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok && h.ui {
		if c, err := r.Cookie(cookieName); err == nil {
			tok, ok = c.Value, true
		}
	}
	if !ok {
		return "", false
	}
	return h.holder(r.Context(), tok)
}

// holder is who holds tok: the serve token's service principal, or the
// principal the authenticator names; false for anything else.
func (h *Handler) holder(ctx context.Context, tok string) (string, bool) {
	if tok == "" {
		return "", false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(h.token)) == 1 {
		return ServeToken, true
	}
	if h.auth == nil {
		return "", false
	}
	who, err := h.auth.Authenticate(ctx, tok)
	return who, err == nil && who != ""
}

func (h *Handler) hostOK(host string) bool {
	for _, ok := range h.hosts {
		if host == ok {
			return true
		}
	}
	return false
}

func (h *Handler) originOK(origin string) bool {
	for _, ok := range h.hosts {
		if origin == h.scheme+"://"+ok {
			return true
		}
	}
	return false
}

// maxBody bounds a submitted run.
const maxBody = 1 << 20

// decode reads r's JSON body (at most maxBody, unknown fields refused)
// into v; otherwise it answers the request, naming what was invalid, and
// returns false.
func decode(w http.ResponseWriter, r *http.Request, what string, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "content-type", "want application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "body", "invalid "+what+": "+err.Error())
		return false
	}
	return true
}

func (h *Handler) submit(w http.ResponseWriter, r *http.Request) {
	var a jobs.RunArgs
	if !decode(w, r, "run", &a) {
		return
	}
	a.SubmittedBy = callerOf(r) // never the body's
	// Submit checks the run against its capability before inserting it: a
	// refusal (a bad field, an unknown capability, a sensitive input sent
	// as a value instead of in input_secrets) is a 400 naming the field.
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
	status := http.StatusCreated
	if j.Duplicate {
		status = http.StatusOK
	}
	writeJSON(w, status, j)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	h.one(w, r, h.q.Get)
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	h.one(w, r, h.q.Cancel)
}

func (h *Handler) one(w http.ResponseWriter, r *http.Request, f func(context.Context, int64) (*jobs.Job, error)) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, "id", "want a positive job id")
		return
	}
	j, err := f(r.Context(), id)
	switch {
	case errors.Is(err, jobs.ErrNotFound):
		writeError(w, http.StatusNotFound, "id", "no such run")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "", "request failed")
	default:
		writeJSON(w, http.StatusOK, j)
	}
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	p := jobs.ListParams{State: r.URL.Query().Get("state")}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			writeError(w, http.StatusBadRequest, "limit", "want a number")
			return
		}
		p.Limit = n
	}
	if err := p.Validate(); err != nil {
		field, _, _ := strings.Cut(err.Error(), ":")
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	js, err := h.q.List(r.Context(), p)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "list failed")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": js})
}

func (h *Handler) interventions(w http.ResponseWriter, r *http.Request) {
	ivs, err := h.q.Interventions(r.Context(), r.URL.Query().Get("status"))
	if h.failed(w, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"interventions": ivs})
}

func (h *Handler) intervention(w http.ResponseWriter, r *http.Request) {
	iv, err := h.q.Intervention(r.Context(), r.PathValue("iv"))
	if h.failed(w, err) {
		return
	}
	writeJSON(w, http.StatusOK, iv)
}

func (h *Handler) resolve(w http.ResponseWriter, r *http.Request) {
	var res jobs.Resolution
	if !decode(w, r, "resolution", &res) {
		return
	}
	res.By = callerOf(r)
	iv, err := h.q.ResolveIntervention(r.Context(), r.PathValue("iv"), res)
	if h.failed(w, err) {
		return
	}
	writeJSON(w, http.StatusOK, iv)
}

// failed writes the error of an intervention call, if any: a refusal is a
// 400 naming its field, an unknown id a 404.
func (h *Handler) failed(w http.ResponseWriter, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, jobs.ErrRefused):
		field, _, _ := strings.Cut(err.Error(), ":")
		writeError(w, http.StatusBadRequest, field, err.Error())
	case errors.Is(err, jobs.ErrNotFound):
		writeError(w, http.StatusNotFound, "iv", "no such intervention")
	default:
		writeError(w, http.StatusInternalServerError, "", "request failed")
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, field, msg string) {
	writeJSON(w, status, map[string]string{"error": msg, "field": field})
}
