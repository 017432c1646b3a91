// Package state is the surface adapter for applications that expose their
// own HTTP automation contract: no browser, no pixels, just the screen as a
// list of controls and the application's own state.
//
// # The contract
//
// The application serves two endpoints under its base URL (see [State],
// [Control], [ActRequest] and friends for every field):
//
//	GET  {base}/_automation/state[?after=SEQ&wait_ms=MS]
//	     200 {"url": "...", "title": "...", "http_status": 502,
//	          "dialog": {"type": "confirm", "message": "Proceed?"},
//	          "controls": [{"id": "c3.member", "role": "textbox", "name": "Member number",
//	                        "value": "", "disabled": false, "frame": "content",
//	                        "region": "Member Search", "parent": ""}, ...],
//	          "app_state": {...}, "seq": 17}
//	     With after and wait_ms the server holds the request until its seq
//	     differs from after or wait_ms milliseconds pass, then answers the
//	     current state either way (a long poll). http_status and dialog are
//	     optional.
//
//	POST {base}/_automation/act
//	     {"control": "c3.member", "action": "type", "text": "12345"}
//	     actions: click, type (replaces the value), select (by option label),
//	     press_key ("key": "Enter"; no control: the focused one), navigate
//	     ("url"), reload.
//	     200 {"navigated": true, "url": "...", "seq": 18}
//	     404 {"error": "...", "code": "stale"}        no such control on this screen
//	     409 {"error": "...", "code": "dialog_open"}  answer the dialog first
//	     400/422 {"error": "...", "code": "invalid" | "disabled"}
//	     501 {"error": "...", "code": "unsupported"}
//	     502/503/504 {"error": "...", "navigated": true, "url": "...", "seq": 19}
//	         the action was performed and the application's backend failed:
//	         the screen now shows the failure (its http_status), as a browser
//	         would show the error page
//
// # The surface
//
// [Surface.Observe] builds a raw [domain.UiSnapshot] from the state (see
// buildSnapshot: a document per frame, one node per control with Ref = the
// control's id, region nodes for runs of controls with a Region, synthetic
// boxes). The app_state never enters the snapshot or any other sink: the
// surface keeps the latest one in memory ([Surface.AppState]) and its
// [perception.StableProgressKey] ([Surface.ProgressKey]) as a progress
// signal, nothing else (DESIGN invariant 11). There are no pixels:
// [Surface.Screenshot] returns surface.ErrNoFrame.
package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// Limits.
const (
	// maxStateBytes bounds a state body.
	maxStateBytes = 16 << 20
	// maxErrorBytes bounds an error body.
	maxErrorBytes = 64 << 10
	// maxErrorText bounds the server message quoted in an error.
	maxErrorText = 512
	// maxWait bounds one long poll; WaitChange polls again after it.
	maxWait = 25 * time.Second
	// maxObservations is how many observations WaitChange remembers.
	maxObservations = 1024
)

// Surface is a session on an application's automation contract. It is safe
// for concurrent use (the port asks for one goroutine at a time).
type Surface struct {
	base    string       // without a trailing slash
	client  *http.Client // follows no redirect
	own     bool         // the caller gave no client
	origins []string     // allowed origins, as origin returns them

	life   context.Context // cancelled by Close
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	seq      uint64            // observations so far
	obs      map[uint64]uint64 // observation seq -> app seq it saw
	order    []uint64          // observation seqs in obs, oldest first
	latest   uint64            // app seq of the newest answer
	appState json.RawMessage   // latest app_state, in memory only
	progress string            // StableProgressKey of appState
}

var (
	_ surface.Surface       = (*Surface)(nil)
	_ surface.ProgressKeyer = (*Surface)(nil)
)

// New returns a surface on the application at baseURL (http or https, with
// a host, no query or fragment). A copy of client that follows no redirect
// is used for every request; nil uses a client of its own without a
// timeout (every call is bounded by its ctx). Every request goes to an
// allowed origin only (WithAllowedOrigins; by default the base URL's), a
// 3xx answer or an answer from another origin is an error wrapping
// ErrOrigin, and nothing is ever re-sent elsewhere. New does no I/O.
func New(baseURL string, client *http.Client, opts ...Option) (*Surface, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("state: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("state: base URL %q: want http(s)://host[/path]", baseURL)
	}
	s := &Surface{
		base:     strings.TrimRight(u.String(), "/"),
		client:   client,
		obs:      map[uint64]uint64{},
		progress: perception.StableProgressKey(nil),
	}
	s.own = client == nil
	s.client = noRedirects(client)
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	base := origin(u)
	if len(s.origins) == 0 {
		s.origins = []string{base}
	} else if !slices.Contains(s.origins, base) {
		return nil, fmt.Errorf("state: base URL %q: origin %s is not among the allowed origins %v", baseURL, base, s.origins)
	}
	s.life, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// StartSession asks the application for a fresh automation session
// (POST {base}/_automation/session), the contract's equivalent of a new
// browser context. An application without the endpoint (404 or 405) keeps
// its one session and StartSession returns surface.ErrUnsupported.
func (s *Surface) StartSession(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/_automation/session", http.NoBody)
	if err != nil {
		return fmt.Errorf("state: session: %w", err)
	}
	resp, err := s.do(req)
	if err != nil {
		return fmt.Errorf("state: session: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return fmt.Errorf("state: no session endpoint: %w", surface.ErrUnsupported)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("state: session: %s", resp.Status)
	}
	return nil
}

// AppState returns a fresh copy of the app_state of the newest state the
// surface has read (by Observe or WaitChange), or nil when there was none
// or it was not a JSON object. It is kept in memory only: never put it in a
// snapshot, a record, an event or a log unredacted (DESIGN invariant 11).
func (s *Surface) AppState() map[string]any {
	s.mu.Lock()
	raw := s.appState
	s.mu.Unlock()
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// ProgressKey returns perception.StableProgressKey of the newest
// app_state ("null" before the first state). Equal keys mean the
// application's own state did not change, whatever its key order.
func (s *Surface) ProgressKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progress
}

// Observe reads the state and returns it as a raw snapshot; Seq increases
// with every call. It returns an error wrapping surface.ErrCrashed when the
// surface is closed or the application cannot be reached, ctx.Err() when
// ctx ends first, and a plain error for a malformed answer.
func (s *Surface) Observe(ctx context.Context) (*domain.UiSnapshot, error) {
	st, err := s.getState(ctx, "")
	if err != nil {
		return nil, err
	}
	snap := buildSnapshot(st)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed()
	}
	s.seq++
	snap.Seq = s.seq
	s.obs[s.seq] = st.Seq
	s.order = append(s.order, s.seq)
	if len(s.order) > maxObservations {
		delete(s.obs, s.order[0])
		s.order = s.order[1:]
	}
	return snap, nil
}

func errClosed() error { return fmt.Errorf("state: closed: %w", surface.ErrCrashed) }

// getState fetches the state (query is "" or a long-poll query) and
// records its seq and app_state.
func (s *Surface) getState(ctx context.Context, query string) (*State, error) {
	ctx, stop, err := s.bind(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+StatePath+query, nil)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.do(req)
	if err != nil {
		if errors.Is(err, ErrOrigin) {
			return nil, fmt.Errorf("state: get state: %w", err)
		}
		return nil, s.transportError(ctx, "get state", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("state: get state: %s%s", resp.Status, serverMessage(resp.Body))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStateBytes+1))
	if err != nil {
		return nil, s.transportError(ctx, "read state", err)
	}
	if len(body) > maxStateBytes {
		return nil, fmt.Errorf("state: get state: body larger than %d bytes", maxStateBytes)
	}
	var st State
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("state: get state: malformed body: %w", err)
	}
	var decoded any
	if len(st.AppState) > 0 {
		_ = json.Unmarshal(st.AppState, &decoded)
	}
	key := perception.StableProgressKey(decoded)
	s.mu.Lock()
	s.latest = st.Seq
	s.appState = append(json.RawMessage(nil), st.AppState...)
	s.progress = key
	s.mu.Unlock()
	st.AppState = nil // the snapshot never sees it
	return &st, nil
}

// bind returns ctx, also cancelled by Close, or an error when the surface
// is closed.
func (s *Surface) bind(ctx context.Context) (context.Context, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, nil, errClosed()
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	return ctx, func() { stop(); cancel() }, nil
}

// transportError classifies a failed request: the caller's ctx error as
// is, a closed surface or an unreachable application as surface.ErrCrashed.
func (s *Surface) transportError(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil && s.life.Err() == nil {
		return cerr
	}
	if s.life.Err() != nil {
		return errClosed()
	}
	return fmt.Errorf("state: %s: %w: %w", op, surface.ErrCrashed, err)
}

// Dispatch performs one authorized action through POST /_automation/act.
// It refuses, before any request: an invalid (zero) action or one whose
// secret is not bound (surface.ErrUnauthorized); extract, wait_for and
// assert, which the engine performs on snapshots, raw_input, which needs
// pixels, and focus, which the contract has no action for
// (surface.ErrUnsupported). The application's answer maps to:
// 404 surface.ErrStale (the control is not on the current screen); 501
// surface.ErrUnsupported; 502, 503 and 504 success with Navigated set (the
// action was performed and the screen shows the backend's failure, which
// recovery rules read from the snapshot's HTTPStatus); any other non-2xx a
// plain error quoting the application's message (with a typed secret
// scrubbed from it). An unreachable application or a closed surface is
// surface.ErrCrashed.
func (s *Surface) Dispatch(ctx context.Context, a policy.AuthorizedAction) (surface.Result, error) {
	if !a.Valid() {
		return surface.Result{}, fmt.Errorf("state: %w", surface.ErrUnauthorized)
	}
	if a.NeedsSecret() {
		return surface.Result{}, fmt.Errorf("state: secret not bound: %w", surface.ErrUnauthorized)
	}
	req := ActRequest{Action: string(a.Type())}
	switch a.Type() {
	case domain.ActClick, domain.ActType, domain.ActSelect, domain.ActPressKey:
		if n := a.Node(); n != nil {
			req.Control = n.Ref
			if req.Control == "" {
				return surface.Result{}, fmt.Errorf("state: %s %q has no control id: %w", n.Role, n.Name, surface.ErrStale)
			}
		}
		req.Text, req.Key = a.Text(), a.Key()
	case domain.ActNavigate:
		req.URL = a.URL()
	case domain.ActReload:
	default:
		return surface.Result{}, fmt.Errorf("state: %s is not performed by this surface: %w", a.Type(), surface.ErrUnsupported)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return surface.Result{}, fmt.Errorf("state: %w", err)
	}
	ctx, stop, err := s.bind(ctx)
	if err != nil {
		return surface.Result{}, err
	}
	defer stop()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+ActPath, bytes.NewReader(body))
	if err != nil {
		return surface.Result{}, fmt.Errorf("state: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := s.do(hreq)
	if err != nil {
		if errors.Is(err, ErrOrigin) {
			return surface.Result{}, fmt.Errorf("state: %s: %w", describe(a), err)
		}
		return surface.Result{}, s.transportError(ctx, "act", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	scrub := func(msg string) string {
		if a.SecretRef() != "" && a.Text() != "" {
			msg = strings.ReplaceAll(msg, a.Text(), "[REDACTED]")
		}
		return msg
	}
	what := describe(a)
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300, code == http.StatusBadGateway, code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		var ar ActResponse
		_ = json.Unmarshal(raw, &ar)
		s.noteSeq(ar.Seq)
		res := surface.Result{Navigated: ar.Navigated || code >= 500, URL: ar.URL}
		return res, nil
	case code == http.StatusNotFound:
		var er ErrorResponse
		if json.Unmarshal(raw, &er) != nil || er.Error == "" {
			return surface.Result{}, fmt.Errorf("state: %s: %s: no automation contract at %s", what, resp.Status, s.base+ActPath)
		}
		return surface.Result{}, fmt.Errorf("state: %s: %s: %w", what, scrub(clean(er.Error)), surface.ErrStale)
	case code == http.StatusNotImplemented:
		return surface.Result{}, fmt.Errorf("state: %s: %s: %w", what, scrub(errorText(raw)), surface.ErrUnsupported)
	default:
		return surface.Result{}, fmt.Errorf("state: %s: %s: %s", what, resp.Status, scrub(errorText(raw)))
	}
}

// describe names an action for an error without its text.
func describe(a policy.AuthorizedAction) string {
	if n := a.Node(); n != nil {
		return fmt.Sprintf("%s on %s %q", a.Type(), n.Role, n.Name)
	}
	return string(a.Type())
}

// noteSeq records the app seq an act answer reported (0: none).
func (s *Surface) noteSeq(seq uint64) {
	if seq == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest = seq
}

// errorText returns the message of an error body: its "error" field when
// it is contract JSON, else the cleaned text.
func errorText(raw []byte) string {
	var er ErrorResponse
	if json.Unmarshal(raw, &er) == nil && er.Error != "" {
		return clean(er.Error)
	}
	return clean(string(raw))
}

func serverMessage(r io.Reader) string {
	raw, _ := io.ReadAll(io.LimitReader(r, maxErrorBytes))
	if t := errorText(raw); t != "" {
		return ": " + t
	}
	return ""
}

// clean makes a server message one bounded line.
func clean(s string) string {
	s = perception.CleanName(s)
	if len(s) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// WaitChange waits until the application's seq differs from the one
// observation since saw (a restarted application may count from 0 again).
// It returns nil at once when the newest answer already carried another
// seq (an act, or a later read) or since names no remembered observation; otherwise it long-polls GET state?after=SEQ&wait_ms=MS in
// rounds of at most 25 s bounded by ctx's deadline, backing off when a
// server answers early without a change (one that does not hold requests).
// It returns ctx.Err() when ctx ends first and an error wrapping
// surface.ErrCrashed when the surface closes or the application is gone.
// ChangedSince reports without waiting (and without asking the
// application) whether the surface has seen a newer app state than the one
// observation since read: true when since names no remembered observation.
// It returns an error wrapping surface.ErrCrashed when the surface is
// closed.
func (s *Surface) ChangedSince(_ context.Context, since uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, errClosed()
	}
	base, ok := s.obs[since]
	return !ok || s.latest != base, nil
}

// It does no I/O when ctx is already done.
func (s *Surface) WaitChange(ctx context.Context, since uint64) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed()
	}
	base, ok := s.obs[since]
	latest := s.latest
	s.mu.Unlock()
	if !ok || latest != base {
		return nil
	}
	backoff := 50 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := maxWait
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait <= 0 {
			<-ctx.Done()
			return ctx.Err()
		}
		start := time.Now()
		q := "?after=" + strconv.FormatUint(base, 10) + "&wait_ms=" + strconv.FormatInt(wait.Milliseconds(), 10)
		st, err := s.getState(ctx, q)
		if err != nil {
			return err
		}
		if st.Seq != base {
			return nil
		}
		if time.Since(start) < wait/2 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-s.life.Done():
				t.Stop()
				return errClosed()
			case <-t.C:
			}
			backoff = min(2*backoff, time.Second)
		}
	}
}

// Screenshot returns surface.ErrNoFrame: the contract has no pixels.
func (s *Surface) Screenshot(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed()
	}
	return nil, surface.ErrNoFrame
}

// Close ends the session: in-flight requests are cancelled, every later
// call fails with surface.ErrCrashed, and the app state is dropped. It is
// idempotent and safe for concurrent use.
func (s *Surface) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.appState = nil
	s.cancel()
	if s.own {
		s.client.CloseIdleConnections()
	}
	return nil
}
