package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/hitl"
)

// RelayClient is how a front console reaches the session relays of the
// workers holding parked runs: the relay credential (a service
// principal's token) it presents as a bearer token, and the HTTP client
// (its TLS roots for relays served over TLS).
type RelayClient struct {
	Token  string
	Client *http.Client
}

func (rc *RelayClient) transport() http.RoundTripper {
	if rc.Client != nil && rc.Client.Transport != nil {
		return rc.Client.Transport
	}
	return http.DefaultTransport
}

// relayOf returns the relay base URL of a session parked in another
// process, or "" when it is this process's or no relay holds it.
func (s *Server) relayOf(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if _, ok := s.session(id); ok {
		return ""
	}
	rows, err := s.cfg.Broker.List(ctx)
	if err != nil {
		return ""
	}
	for _, w := range rows {
		if w.SessionID == id && w.Lease == nil {
			return w.Relay
		}
	}
	return ""
}

// sessionOf returns the session a live request names: its session query
// parameter, or the session field of its JSON body (which is put back).
func sessionOf(w http.ResponseWriter, r *http.Request) string {
	if id := r.URL.Query().Get("session"); id != "" || r.Method == http.MethodGet {
		return id
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<16))
	body := buf.Bytes()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var q struct {
		Session string `json:"session"`
	}
	_ = json.Unmarshal(body, &q)
	return q.Session
}

// proxied relays a signed-in operator's request on a session parked in
// another process to that worker's relay, and reports whether it did. The
// relay gets the relay credential and the operator's name, never the
// browser's cookie, CSRF token or Origin; the worker's lease, HUMAN policy
// and dispatcher decide, so nothing sent here reaches a page but through
// them.
func (s *Server) proxied(w http.ResponseWriter, r *http.Request) bool {
	if !relayPath(r.URL.Path) || r.URL.Path == "/api/sessions" {
		return false
	}
	base := s.relayOf(r.Context(), sessionOf(w, r))
	if base == "" {
		return false
	}
	target, err := url.Parse(base)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": "the session's relay address is not an http(s) URL"})
		return true
	}
	si, ok := s.signedIn(r, r.Method != http.MethodGet || r.URL.Path == "/ws")
	if !ok {
		http.Error(w, "sign in, and send the CSRF token", http.StatusForbidden)
		return true
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			h := pr.Out.Header
			for _, k := range []string{"Cookie", "Origin", "Referer", csrfHeader, "Authorization", OperatorHeader} {
				h.Del(k)
			}
			h.Set("Authorization", "Bearer "+s.cfg.Fronts.Token)
			h.Set(OperatorHeader, si.who.Name)
			q := pr.Out.URL.Query()
			q.Del("csrf")
			pr.Out.URL.RawQuery = q.Encode()
		},
		Transport: s.cfg.Fronts.transport(),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.cfg.Logger.WarnContext(r.Context(), "relay unreachable", slog.String("relay", base), slog.Any("error", err))
			writeJSON(w, http.StatusBadGateway, map[string]string{"error": "the worker holding this session did not answer"})
		},
	}
	rp.ServeHTTP(w, r)
	return true
}

// remote is what a relay says of the sessions it holds: their live
// leases and the gestures operators sent in them.
type remote struct {
	lease   *hitl.Status
	effects []HumanEffect
}

// relayed fills in the rows of sessions parked in other processes from
// their relays (one call per relay, as op, at most 3s each): the live
// lease and the operators' gestures. A relay that does not answer leaves
// its rows without a lease and says so in RelayError.
func (s *Server) relayed(ctx context.Context, op string, rows []row) {
	byRelay := map[string][]int{}
	for i := range rows {
		if rows[i].Lease == nil && rows[i].Relay != "" {
			byRelay[rows[i].Relay] = append(byRelay[rows[i].Relay], i)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for base, idx := range byRelay {
		wg.Go(func() {
			got, err := s.fetchRelay(ctx, base, op)
			mu.Lock()
			defer mu.Unlock()
			for _, i := range idx {
				if err != nil {
					rows[i].RelayError = "the worker holding this session did not answer"
					continue
				}
				if rm, ok := got[rows[i].SessionID]; ok {
					rows[i].Lease, rows[i].HumanEffects = rm.lease, rm.effects
				}
			}
		})
	}
	wg.Wait()
}

func (s *Server) fetchRelay(ctx context.Context, base, op string) (map[string]remote, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/sessions", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.cfg.Fronts.Token)
	req.Header.Set(OperatorHeader, op)
	resp, err := (&http.Client{Transport: s.cfg.Fronts.transport()}).Do(req)
	if err != nil {
		s.cfg.Logger.WarnContext(ctx, "relay unreachable", slog.String("relay", base), slog.Any("error", err))
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.cfg.Logger.WarnContext(ctx, "relay refused the list", slog.String("relay", base), slog.Int("status", resp.StatusCode))
		return nil, fmt.Errorf("relay %s: %s", base, resp.Status)
	}
	var out struct {
		Sessions []row `json:"sessions"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("relay %s: %w", base, err)
	}
	m := make(map[string]remote, len(out.Sessions))
	for _, w := range out.Sessions {
		if w.Lease != nil {
			m[w.SessionID] = remote{lease: w.Lease, effects: w.HumanEffects}
		}
	}
	return m, nil
}
