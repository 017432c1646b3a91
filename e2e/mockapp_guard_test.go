package e2e

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// TestMockappGuardInChromium loads a page of another origin (127.0.0.1 on
// another port) in real Chromium that posts twice at MemberDesk: a
// no-cors text/plain fetch with a JSON body to /_control/arm (a "simple"
// request: no preflight) and a member search form to /content/search. Both are refused 403 and change nothing; then the
// lookup, whose forms carry the app's own origin, still succeeds.
func TestMockappGuardInChromium(t *testing.T) {
	logs := &syncBuffer{}
	b := setup(t, mockapp.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	app := b.app.URL()
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Win a prize</title></head><body>
<iframe name="b" title="b"></iframe>
<form id="search" method="post" target="b" action="%s/content/search"><input type="hidden" name="member" value="12345"></form>
<script>
fetch(%q + "/_control/arm", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
  body: '{"fault":"transient_load","count":-1}'});
document.getElementById("search").submit();
</script>
</body></html>`, html.EscapeString(app), app)
	}))
	t.Cleanup(evil.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // two Chromium runs on a loaded CI machine
	defer cancel()
	sess, err := sharedBrowser.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	lookup := load(t, "memberdesk.savings_balance")
	// stepWait is short for the other site's page, where the run must
	// halt (a slow machine only makes it halt sooner), and generous for
	// the app's own lookup, which ends as soon as each screen shows.
	run := func(base string, stepWait time.Duration) *domain.RunRecord {
		t.Helper()
		rec, err := replay.Run(ctx, replay.Options{
			Capability: lookup, Library: b.lib, Inputs: map[string]string{"member_id": "12345"},
			BaseURL: base, Surface: sess, Redactor: redact.New(), DataDir: b.dataDir,
			Secrets: secrets{"corebank_operator": operator, "corebank_password": password},
			RunID:   fmt.Sprintf("guard-%d", time.Now().UnixNano()), StepWait: stepWait,
		})
		if err != nil {
			t.Fatalf("replay on %s: %v", base, err)
		}
		return rec
	}
	// The lookup opened on the other site's page: Chromium loads it, its
	// script posts both forms, and the run halts there (no Sign on, no
	// Member Search).
	if rec := run(evil.URL, time.Second); rec.Status == domain.StatusSuccess {
		t.Fatalf("a lookup on the other site succeeded: %+v", rec.Outputs)
	}
	var st mockapp.State
	deadline := time.Now().Add(60 * time.Second) // ends when both refusals are logged
	for time.Now().Before(deadline) {
		st = b.state(t)
		if strings.Count(logs.String(), "request refused: origin") >= 2 || st.Faults[mockapp.FaultTransientLoad] != 0 || len(st.Posts) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for f, n := range st.Faults {
		if n != 0 {
			t.Errorf("fault %s armed (%d) by a cross-site form", f, n)
		}
	}
	if len(st.Posts) != 0 {
		t.Errorf("posts = %v: a cross-site form reached a handler", st.Posts)
	}
	if n := strings.Count(logs.String(), "request refused: origin"); n != 2 {
		t.Fatalf("app refused %d cross-site requests, want 2; logs:\n%s", n, logs.String())
	}

	// The app's own forms carry its origin.
	rec := run(app, 60*time.Second)
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("lookup on the app: %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	}
	st = b.state(t)
	if st.Posts["/content/signon"] != 1 || st.Posts["/content/search"] != 1 {
		t.Errorf("posts after the lookup = %v, want one sign-on and one search", st.Posts)
	}
}

// TestMockappGuardRebinding sends what a DNS-rebinding page's requests
// carry: the app's port under another host name.
func TestMockappGuardRebinding(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	port := b.app.URL()[strings.LastIndex(b.app.URL(), ":")+1:]
	for _, path := range []string{"/", "/content/signon", "/_control/state", "/_automation/state"} {
		req, err := http.NewRequest(http.MethodGet, b.app.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "evil.example:" + port
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host evil.example = %d, want 421", path, resp.StatusCode)
		}
	}
}

// TestMockappCommandBindsLoopback runs the real binary: a non-loopback
// --addr is refused before anything binds, naming --allow-remote; a
// loopback one serves with no warning.
func TestMockappCommandBindsLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:8811", ":8811", "192.0.2.1:8811"} {
		res := runBin(t, nil, "mockapp", "--addr", addr)
		if res.code != 1 || !strings.Contains(res.stderr, "--allow-remote") || !strings.Contains(res.stderr, addr) {
			t.Errorf("mockapp --addr %s: exit %d, stderr %q; want exit 1 naming --allow-remote and the address", addr, res.code, res.stderr)
		}
		if strings.Contains(res.stdout, "listening") {
			t.Errorf("mockapp --addr %s listened: %q", addr, res.stdout)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // a subprocess on a loaded CI machine
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "mockapp", "--addr", "127.0.0.1:0")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening on http://127.0.0.1:") {
		t.Fatalf("mockapp --addr 127.0.0.1:0: first line %q (%v)", line, err)
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("loopback bind warned: %q", stderr.String())
	}
}
