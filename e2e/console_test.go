package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsoleSignsInPrincipals runs the real binary: `cua users add`
// makes alice's token, `cua console` on the same data directory signs her
// in with it (the page names her, nobody typed a name) and refuses a
// garbage token; a remote bind without TLS exits non-zero naming the
// flags before anything opens.
func TestConsoleSignsInPrincipals(t *testing.T) {
	t.Parallel()
	env := []string{"CUA_DATA_DIR=" + t.TempDir()}
	r := runBin(t, env, "console", "--addr", "0.0.0.0:0", "--allow-remote")
	if r.code == 0 || !strings.Contains(r.stderr, "--tls-cert and --tls-key") {
		t.Fatalf("remote console without TLS: exit %d\n%s", r.code, r.stderr)
	}
	r = runBin(t, env, "users", "add", "alice", "--role", "operator")
	token := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(token, "cuap_alice_") {
		t.Fatalf("users add: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "console", "--addr", "127.0.0.1:0")
	cmd.Env = append(cmd.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	base := consoleURL(t, stderr)
	if page := consoleSignIn(t, base, "cuap_alice_"+strings.Repeat("0", 64)); !strings.Contains(page, "Sign-in refused.") {
		t.Fatalf("a wrong token signed in:\n%s", page)
	}
	if page := consoleSignIn(t, base, token); !strings.Contains(page, `<meta name="operator" content="alice">`) {
		t.Fatalf("alice's token did not sign alice in:\n%s", page)
	}
}

// consoleURL reads the console's stderr until it says where it listens,
// then drains the rest in the background.
func consoleURL(t *testing.T, stderr io.Reader) string {
	t.Helper()
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`console: (http://127\.0\.0\.1:\d+)/`)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return m[1]
		}
	}
	t.Fatalf("the console never said where it listens:\n%s", strings.Join(seen, "\n"))
	return ""
}

// consoleSignIn posts token to the console's sign-in form from a new
// browser and returns the page it ends on.
func consoleSignIn(t *testing.T, base, token string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no sign-in form:\n%s", body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/signin",
		strings.NewReader(url.Values{"csrf": {string(m[1])}, "token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	if res, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	return string(page)
}
