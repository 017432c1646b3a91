package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface/sim"
)

// parkSim parks a run with its evidence under dataDir on a simulated form
// (a heading and a Go button) in srv, and returns the run; the park ends
// with the test.
func parkSim(t *testing.T, srv *Server, id, dataDir string) *runtime.Run {
	t.Helper()
	return parkSimDone(t, srv, id, dataDir, nil)
}

// parkSimDone is parkSim sending what Park returned on done (when not
// nil).
func parkSimDone(t *testing.T, srv *Server, id, dataDir string, done chan<- error) *runtime.Run {
	t.Helper()
	run, err := runtime.NewRun(runtime.RunConfig{ID: id, BaseURL: "http://app.test", DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	flow := sim.NewFlow("http://app.test", sim.Screen{Name: "form",
		Nodes: []sim.Node{{Role: "heading", Name: "Form"}, {Role: "button", Name: "Go"}}})
	if err := flow.Push(sim.Goto("form")); err != nil {
		t.Fatal(err)
	}
	surf := sim.New(flow)
	t.Cleanup(func() { _ = surf.Close() })
	go func() {
		err := srv.Park(t.Context(), runtime.Parked{Run: run, Surface: surf, Holder: run.Holder, Epoch: 1,
			Domains: []string{"app.test"}, Waiting: hitl.Waiting{SessionID: id, RunID: id, Capability: "x.y@1.0.0",
				Step: "go", FailureCode: domain.CodeUnexpectedState, Summary: "an undeclared dialog is open"}})
		if done != nil {
			done <- err
		}
	}()
	return run
}

// claimAs claims session for c and returns the lease's answer.
func claimAs(t *testing.T, c *client, session string) (int, hitl.Status) {
	t.Helper()
	code, body := c.post(t, "/api/claim", c.srv.URL(), c.csrf, `{"session":"`+session+`"}`)
	var st hitl.Status
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("claim answer %s: %v", body, err)
		}
	}
	return code, st
}

// clickGo sends c's click on the centre of the Go button at epoch.
func clickGo(t *testing.T, c *client, session string, epoch uint64) (int, string) {
	t.Helper()
	lv := liveSession(t, c.srv, session)
	lv.mu.Lock()
	snap, err := lv.observe(t.Context())
	lv.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range snap.Nodes {
		if n.Role == "button" && n.Name == "Go" {
			x, y := n.Bounds.Center()
			return c.post(t, "/api/input?session="+session, c.srv.URL(), c.csrf,
				fmt.Sprintf(`{"kind":"click","x":%f,"y":%f,"epoch":%d}`, x, y, epoch))
		}
	}
	t.Fatal("no Go button on the parked form")
	return 0, ""
}

// TestSignInPerPrincipal: on a real SQLite store with real principals,
// each person signs in with their own token and is shown, holds leases
// and is recorded as that principal; a second browser signed in as bob
// cannot act in, renew or release alice's lease; a garbage token, bob's
// secret under alice's name and an empty token sign nobody in; alice
// signing in again picks up the lease she holds; and the human events of
// the run's evidence name alice.
func TestSignInPerPrincipal(t *testing.T) {
	t.Parallel()
	srv, _ := openConsole(t, filepath.Join(t.TempDir(), "cua.db"))
	dataDir := t.TempDir()
	run := parkSim(t, srv, "r-who", dataDir)
	alice, bob := signIn(t, srv, "alice"), signIn(t, srv, "bob")
	bobSecret := strings.TrimPrefix(tokenOf(t, srv, "bob"), "cuap_bob_")
	for name, tok := range map[string]string{
		"garbage":               "not-a-token",
		"empty":                 "",
		"bob's secret as alice": "cuap_alice_" + bobSecret,
		"alice's name only":     "cuap_alice_",
	} {
		c, code, page := trySignIn(t, srv, tok)
		if code != http.StatusUnauthorized || !strings.Contains(page, "Sign-in refused.") || csrfMeta.MatchString(page) {
			t.Errorf("%s token: %d, want 401 Sign-in refused and no session:\n%s", name, code, page)
		}
		if got := c.get(t, "/api/sessions"); !strings.Contains(got, "sign in") {
			t.Errorf("%s token: the browser lists sessions: %s", name, got)
		}
	}
	waitRows(t, alice, func(ws []hitl.Waiting) bool { return len(ws) == 1 && ws[0].Lease != nil })
	code, st := claimAs(t, alice, "r-who")
	if code != http.StatusOK || st.Holder != "human:alice" {
		t.Fatalf("alice's claim: %d %+v", code, st)
	}
	if code, _ := claimAs(t, bob, "r-who"); code != http.StatusConflict {
		t.Errorf("bob's claim of alice's session: %d, want 409", code)
	}
	if code, body := clickGo(t, bob, "r-who", st.Epoch); code != http.StatusForbidden || !strings.Contains(body, "LEASE_LOST") {
		t.Errorf("bob's click at alice's epoch: %d %s, want 403 LEASE_LOST", code, body)
	}
	for _, path := range []string{"/api/renew", "/api/release"} {
		if code, _ := bob.post(t, path, srv.URL(), bob.csrf, fmt.Sprintf(`{"session":"r-who","epoch":%d}`, st.Epoch)); code != http.StatusConflict {
			t.Errorf("bob's %s of alice's lease: %d, want 409", path, code)
		}
	}
	// Alice's click gets past the lease to the dispatcher (the simulated
	// surface has no raw input: the dispatch fails, recorded as hers).
	if _, body := clickGo(t, alice, "r-who", st.Epoch); strings.Contains(body, "LEASE_LOST") {
		t.Fatalf("alice's own click: %s", body)
	}
	// Alice closed her tab: signed in again, she picks up her own lease.
	again := signIn(t, srv, "alice")
	if code, st2 := claimAs(t, again, "r-who"); code != http.StatusOK || st2.Epoch != st.Epoch || st2.Holder != "human:alice" {
		t.Fatalf("alice's claim from a new browser: %d %+v, want her lease at epoch %d", code, st2, st.Epoch)
	}
	if _, body := clickGo(t, again, "r-who", st.Epoch); strings.Contains(body, "LEASE_LOST") {
		t.Fatalf("alice's click from her new browser: %s", body)
	}
	if err := run.Evidence.Close(); err != nil {
		t.Fatal(err)
	}
	checkPrincipalEvents(t, filepath.Join(dataDir, "runs", "r-who", "events.jsonl"), "alice", 2)
}

// checkPrincipalEvents: at least least events of the log are human, and
// every human event names principal.
func checkPrincipalEvents(t *testing.T, path, principal string, least int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	human := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Type  string         `json:"type"`
			Actor string         `json:"actor"`
			Data  map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if e.Actor != string(domain.ActorHuman) {
			continue
		}
		human++
		if e.Data["principal"] != principal {
			t.Errorf("human %s event names principal %v, want %q: %s", e.Type, e.Data["principal"], principal, line)
		}
	}
	if human < least {
		t.Fatalf("%d human events, want %d or more:\n%s", human, least, data)
	}
}

// TestSignInRateLimit: one address gets 10 sign-in tries a minute,
// right or wrong; the 11th is 429 with Retry-After, and tries are answered
// again once the minute has passed. Another address is not limited by it.
func TestSignInRateLimit(t *testing.T) {
	t.Parallel()
	clock := &testClock{at: time.Now()}
	srv, _ := openConsoleWith(t, filepath.Join(t.TempDir(), "cua.db"), func(c *Config) { c.Now = clock.now })
	tok := tokenOf(t, srv, "alice")
	for i := 1; i <= 10; i++ {
		try := "cuap_nobody_" + strings.Repeat("0", 64)
		if i == 10 {
			try = tok // the right token counts as a try too
		}
		if _, code, _ := trySignIn(t, srv, try); code == http.StatusTooManyRequests {
			t.Fatalf("try %d: 429, want an answer", i)
		}
	}
	_, code, page := trySignIn(t, srv, tok)
	if code != http.StatusTooManyRequests {
		t.Fatalf("11th try in a minute: %d, want 429", code)
	}
	c, _, _ := trySignIn(t, srv, tok)
	retry, err := strconv.Atoi(c.last.Header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 60 {
		t.Errorf("Retry-After %q, want 1..60 seconds (%s)", c.last.Header.Get("Retry-After"), page)
	}
	if ok, _ := srv.limit.allow("192.0.2.7:5555"); !ok {
		t.Error("another address is limited by this one's tries")
	}
	clock.add(61 * time.Second)
	if _, code, page := trySignIn(t, srv, tok); code != http.StatusOK || !csrfMeta.MatchString(page) {
		t.Fatalf("a try after the minute: %d, want signed in:\n%s", code, page)
	}
}

// TestSignInLockout: five wrong secrets for alice lock her: her right
// token is then refused, the page says until when, until the directory's
// clock passes it; wrong tokens for a name nobody has are refused the same
// way as any garbage, never "locked", however many.
func TestSignInLockout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cua.db")
	srv, _ := openConsoleWith(t, path, func(c *Config) { c.SignInLimit = 1000 })
	ps := principalsOf(t, srv)
	tok := tokenOf(t, srv, "alice")
	wrong := "cuap_alice_" + strings.Repeat("ab", 32)
	for i := 1; i <= 5; i++ {
		if _, code, page := trySignIn(t, srv, wrong); code != http.StatusUnauthorized || strings.Contains(page, "locked") && i < 5 {
			t.Fatalf("wrong secret %d: %d\n%s", i, code, page)
		}
	}
	_, code, page := trySignIn(t, srv, tok)
	if code != http.StatusUnauthorized || !strings.Contains(page, "locked until") {
		t.Fatalf("alice's right token after 5 wrong: %d, want 401 locked until:\n%s", code, page)
	}
	for i := 1; i <= 7; i++ {
		_, code, page := trySignIn(t, srv, "cuap_nobody_"+strings.Repeat("ab", 32))
		if code != http.StatusUnauthorized || strings.Contains(page, "locked") || !strings.Contains(page, "Sign-in refused.") {
			t.Fatalf("unknown name, try %d: %d, want the plain refusal:\n%s", i, code, page)
		}
	}
	ps.clock.add(14 * time.Minute)
	if _, _, page := trySignIn(t, srv, tok); !strings.Contains(page, "locked until") {
		t.Fatalf("alice's token 14 minutes later: not locked:\n%s", page)
	}
	ps.clock.add(2 * time.Minute)
	signIn(t, srv, "alice")
}

// TestConsoleOverTLS: a console with a certificate serves HTTPS; a
// browser signs in over it, gets Secure cookies, and its same-origin POST
// passes the gate (an http:// Origin does not).
func TestConsoleOverTLS(t *testing.T) {
	t.Parallel()
	cert := selfSigned(t)
	srv, _ := openConsoleWith(t, filepath.Join(t.TempDir(), "cua.db"), func(c *Config) { c.TLS = cert })
	if !strings.HasPrefix(srv.URL(), "https://") {
		t.Fatalf("URL %s, want https", srv.URL())
	}
	alice := signIn(t, srv, "alice")
	for _, ck := range alice.last.Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s is not Secure", ck.Name)
		}
	}
	if code, _ := alice.post(t, "/api/claim", srv.URL(), alice.csrf, `{"session":"none"}`); code != http.StatusNotFound {
		t.Errorf("same-origin claim over TLS: %d, want 404 (past the gate)", code)
	}
	plain := strings.Replace(srv.URL(), "https://", "http://", 1)
	if code, _ := alice.post(t, "/api/claim", plain, alice.csrf, `{"session":"none"}`); code != http.StatusForbidden {
		t.Errorf("claim with an http Origin: %d, want 403", code)
	}
	jar, _ := cookiejar.New(nil)
	if _, err := (&http.Client{Jar: jar}).Get(srv.URL() + "/"); err == nil {
		t.Error("a client that does not trust the certificate connected")
	}
}

// TestSessionLapses: a signed-in browser stays signed in for SessionTTL,
// then must sign in again (a disabled principal's browser does not keep
// its session for ever).
func TestSessionLapses(t *testing.T) {
	t.Parallel()
	clock := &testClock{at: time.Now()}
	srv, _ := openConsoleWith(t, filepath.Join(t.TempDir(), "cua.db"), func(c *Config) { c.Now, c.SessionTTL = clock.now, time.Hour })
	alice := signIn(t, srv, "alice")
	clock.add(59 * time.Minute)
	if got := alice.get(t, "/api/sessions"); !strings.Contains(got, `"sessions"`) {
		t.Fatalf("59 minutes in: %s, want the list", got)
	}
	clock.add(time.Minute)
	if got := alice.get(t, "/api/sessions"); !strings.Contains(got, "sign in") {
		t.Fatalf("an hour in: %s, want sign in", got)
	}
	if code, _ := alice.post(t, "/api/claim", srv.URL(), alice.csrf, `{"session":"none"}`); code != http.StatusForbidden {
		t.Errorf("a claim after the session lapsed: %d, want 403", code)
	}
}
