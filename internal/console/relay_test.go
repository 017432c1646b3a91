package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/store"
)

// relayAuth accepts the relay principal's token as the relay credential
// and any active principal of the directory as the operator, as
// internal/cmd/console's RelayAuthenticator does.
func relayAuth(ps *principals, relayName string) RelayAuth {
	return RelayAuthFunc(func(ctx context.Context, token, operator string) (Identity, error) {
		who, err := ps.dir.Authenticate(ctx, token)
		if err != nil {
			return Identity{}, err
		}
		if who.Name != relayName || operator == relayName {
			return Identity{}, errors.New("not the relay credential")
		}
		rec, err := ps.st.GetPrincipal(ctx, operator)
		if err != nil || !rec.DisabledAt.IsZero() {
			return Identity{}, fmt.Errorf("operator %q: %w", operator, errors.Join(err, store.ErrNotFound))
		}
		return Identity{Name: rec.Name, Role: rec.Role}, nil
	})
}

// relayCall sends a request straight to a relay with the given bearer
// token and operator (either may be empty).
func relayCall(t *testing.T, relay *Server, method, path, token, operator, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, relay.URL()+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if operator != "" {
		req.Header.Set(OperatorHeader, operator)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestRelay: a run parked in a worker's relay (its own process's console
// in relay mode, on the shared store) is listed, claimed and acted on from
// a front console in another server: a caller of the relay without a
// token, with a wrong one, or with an operator's own token is refused 401,
// as is the relay credential naming no principal; alice, signed in to the
// front console, sees the session with its live lease, claims it and
// clicks (the worker's lease and dispatcher take it); bob, signed in to
// the same console, and bob named by the relay credential directly, can
// neither claim nor act on alice's claim; the screencast socket reaches
// the relay; alice's release and resume wake the parked run and closes its row.
func TestRelay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cua.db")
	front, _ := openConsole(t, path)
	ps := principalsOf(t, front)
	relayTok := ps.token(t, "console-relay")
	front.cfg.Fronts = &RelayClient{Token: relayTok}
	relay, db := openConsoleWith(t, path, func(c *Config) { c.Auth, c.Relay = nil, relayAuth(ps, "console-relay") })
	parked := make(chan error, 1)
	parkSimDone(t, relay, "r-far", t.TempDir(), parked)
	alice, bob := signIn(t, front, "alice"), signIn(t, front, "bob")

	for name, tok := range map[string]string{"no token": "", "a wrong token": "cuap_console-relay_nope",
		"alice's own token": ps.token(t, "alice")} {
		if code, _ := relayCall(t, relay, http.MethodGet, "/api/sessions", tok, "alice", ""); code != http.StatusUnauthorized {
			t.Errorf("relay list with %s: %d, want 401", name, code)
		}
		if code, _ := relayCall(t, relay, http.MethodPost, "/api/claim", tok, "alice", `{"session":"r-far"}`); code != http.StatusUnauthorized {
			t.Errorf("relay claim with %s: %d, want 401", name, code)
		}
	}
	for _, op := range []string{"", "mallory", "console-relay"} {
		if code, _ := relayCall(t, relay, http.MethodGet, "/api/sessions", relayTok, op, ""); code != http.StatusUnauthorized {
			t.Errorf("relay credential as operator %q: %d, want 401", op, code)
		}
	}
	if code, _ := relayCall(t, relay, http.MethodGet, "/", relayTok, "alice", ""); code != http.StatusNotFound {
		t.Errorf("relay page: %d, want 404 (a relay serves no page)", code)
	}

	rows := waitRows(t, alice, func(ws []hitl.Waiting) bool { return len(ws) == 1 && ws[0].Lease != nil })
	if rows[0].Relay != relay.URL() || rows[0].Capability != "x.y@1.0.0" || rows[0].Step != "go" {
		t.Fatalf("front console's row = %+v, want the relay %s and the run's detail", rows[0], relay.URL())
	}
	code, st := claimAs(t, alice, "r-far")
	if code != http.StatusOK || st.Holder != "human:alice" {
		t.Fatalf("alice's claim through the front console: %d %+v", code, st)
	}
	if code, _ := claimAs(t, bob, "r-far"); code != http.StatusConflict {
		t.Errorf("bob's claim of alice's session: %d, want 409", code)
	}
	if code, _ := relayCall(t, relay, http.MethodPost, "/api/claim", relayTok, "bob", `{"session":"r-far"}`); code != http.StatusConflict {
		t.Errorf("bob's claim straight at the relay: %d, want 409", code)
	}
	x, y := goButton(t, relay, "r-far")
	click := fmt.Sprintf(`{"kind":"click","x":%f,"y":%f,"epoch":%d}`, x, y, st.Epoch)
	if code, body := bob.post(t, "/api/input?session=r-far", front.URL(), bob.csrf, click); code != http.StatusForbidden || !strings.Contains(body, "LEASE_LOST") {
		t.Errorf("bob's click at alice's epoch: %d %s, want 403 LEASE_LOST", code, body)
	}
	if code, body := relayCall(t, relay, http.MethodPost, "/api/input?session=r-far", relayTok, "bob", click); code != http.StatusForbidden || !strings.Contains(body, "LEASE_LOST") {
		t.Errorf("bob's click straight at the relay: %d %s, want 403 LEASE_LOST", code, body)
	}
	if _, body := alice.post(t, "/api/input?session=r-far", front.URL(), alice.csrf, click); strings.Contains(body, "LEASE_LOST") || strings.Contains(body, "sign in") {
		t.Fatalf("alice's click through the front console: %s", body)
	}
	if code, _ := alice.post(t, "/api/input?session=r-far", front.URL(), "", click); code != http.StatusForbidden {
		t.Errorf("alice's click without the CSRF token: %d, want 403", code)
	}
	// The simulated surface paints no picture: the relay's own answer
	// (501) comes back through the front console's socket.
	if _, res, err := alice.dialWS(t.Context(), "r-far", front.URL(), alice.csrf); err == nil || res == nil || res.StatusCode != http.StatusNotImplemented {
		t.Errorf("screencast through the front console: %v %v, want the relay's 501", res, err)
	}
	if code, body := alice.post(t, "/api/release", front.URL(), alice.csrf, fmt.Sprintf(`{"session":"r-far","epoch":%d}`, st.Epoch)); code != http.StatusOK {
		t.Fatalf("alice's release: %d %s", code, body)
	}
	if code, body := alice.post(t, "/api/resume", front.URL(), alice.csrf, `{"session":"r-far"}`); code != http.StatusOK {
		t.Fatalf("alice's resume: %d %s", code, body)
	}
	if err := <-parked; err != nil {
		t.Fatalf("the parked run: %v, want resumed", err)
	}
	ivs, err := db.ListInterventions(t.Context(), store.InterventionFilter{SessionID: "r-far"})
	if err != nil || len(ivs) != 1 || ivs[0].Status != store.InterventionResolved || ivs[0].Resolution != "resumed by human:alice" {
		t.Fatalf("the row after the resume = %+v, %v", ivs, err)
	}
}

// goButton returns the centre of the Go button of a session parked in srv.
func goButton(t *testing.T, srv *Server, session string) (float64, float64) {
	t.Helper()
	lv := liveSession(t, srv, session)
	lv.mu.Lock()
	snap, err := lv.observe(t.Context())
	lv.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range snap.Nodes {
		if n.Role == "button" && n.Name == "Go" {
			return n.Bounds.Center()
		}
	}
	t.Fatal("no Go button on the parked form")
	return 0, 0
}
