package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// recordingProxy is an HTTP proxy that forwards only to loopback and
// remembers every host asked for.
type recordingProxy struct {
	mu    sync.Mutex
	hosts map[string]int
	last  time.Time
}

// quiet waits until the proxy has seen no request for d (at most max) and
// returns the hosts seen so far.
func (p *recordingProxy) quiet(d, max time.Duration) map[string]int {
	start := time.Now()
	deadline := start.Add(max)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		since := p.last
		p.mu.Unlock()
		if since.Before(start) {
			since = start // no request yet: quiet is counted from now
		}
		idle := time.Since(since)
		// Chromium's start-up calls come in bursts over a few seconds:
		// wait for a quiet spell, and at least twice that since the start.
		if idle >= d && time.Since(start) >= 2*d {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for h, n := range p.hosts {
		out[h] = n
	}
	return out
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if r.URL.Host != "" {
		host = r.URL.Host
	}
	p.mu.Lock()
	p.hosts[host]++
	p.last = time.Now()
	p.mu.Unlock()
	h, _, _ := net.SplitHostPort(host)
	if r.Method == http.MethodConnect || (h != "127.0.0.1" && h != "localhost") {
		http.Error(w, "refused by test proxy", http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// TestReplayTalksOnlyToTheApp proves a replay makes no model call and opens
// no connection except to the target app: the replay engine links no
// socket, HTTP or TLS package at all, and every request the browser makes
// during a full lookup goes through a recording proxy that sees only the
// mock app's host. Debian's Chromium calls a few Google hosts of its own at
// start-up (component and extension updates, account list) whatever the
// flags; the test records those before cua opens its session and fails on
// any host first contacted after that (session start included).
func TestReplayTalksOnlyToTheApp(t *testing.T) {
	t.Parallel()
	deps, err := exec.Command("go", "list", "-deps", "../internal/replay").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range strings.Fields(string(deps)) {
		if d == "net" || d == "net/http" || d == "crypto/tls" || strings.Contains(d, "openai") || strings.Contains(d, "anthropic") || strings.HasSuffix(d, "internal/model") {
			t.Errorf("internal/replay depends on %s", d)
		}
	}

	proxy := &recordingProxy{hosts: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	cdpURL := launchChromium(t, append(browser.Flags(), "--proxy-server=http://"+ln.Addr().String(), "--proxy-bypass-list=<-loopback>")...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a quiet wait of up to 20 s and a lookup; only a hang meets it
	defer cancel()
	br, err := browser.Launch(ctx, browser.Options{CDPURL: cdpURL})
	if err != nil {
		t.Fatalf("attach to %s: %v", cdpURL, err)
	}
	defer br.Close()
	// Chromium's own start-up calls are recorded before cua opens its
	// session: from then on no host but the app's is excused.
	background := proxy.quiet(3*time.Second, 20*time.Second)
	for h := range background {
		t.Logf("Chromium's own start-up request to %s (refused by the proxy)", h)
	}
	sess, err := br.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	b := setup(t, mockapp.Options{})
	rec, err := replay.Run(ctx, replay.Options{
		Capability: load(t, lookup), Library: b.lib, Inputs: member("12345"), BaseURL: b.app.URL(), Surface: sess,
		Secrets: secrets{"corebank_operator": operator, "corebank_password": password}, Redactor: redact.New(),
		DataDir: b.dataDir, RunID: "isolation",
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("status %s: %s", rec.Status, rec.Message)
	}
	app, _ := url.Parse(b.app.URL())
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	if proxy.hosts[app.Host] < 5 {
		t.Fatalf("the proxy saw %v: the browser's traffic did not go through it", proxy.hosts)
	}
	for h, n := range proxy.hosts {
		if _, before := background[h]; before {
			continue
		}
		if chromiumOwn(h) {
			// Chromium's own schedule (updates, accounts): on a loaded
			// machine it can start after the quiet window. The proxy
			// refused it; cua did not ask for it.
			t.Logf("Chromium's own background request to %s, after the quiet window (refused by the proxy)", h)
			continue
		}
		if h != app.Host {
			t.Errorf("the browser asked for %s (%d requests); only %s is the target app", h, n, app.Host)
		}
	}
}

// chromiumOwn reports whether host is one Debian's Chromium calls on its
// own (component and extension updates, the account list), never a host a
// page or cua asks for.
func chromiumOwn(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	for _, suffix := range []string{".google.com", ".googleapis.com", ".gvt1.com"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return false
}

// launchChromium starts a headless Chromium with cua's flags (passed in
// extra, with the test's own) and returns
// its DevTools websocket URL; the process ends with the test.
func launchChromium(t *testing.T, extra ...string) string {
	t.Helper()
	exe := os.Getenv("CUA_BROWSER")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	dir, err := os.MkdirTemp("", "cua-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--headless", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--remote-debugging-port=0"}, extra...)
	args = append(args, "about:blank")
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "ws://"); i >= 0 {
				found <- strings.TrimSpace(sc.Text()[i:])
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(90 * time.Second): // Chromium's start on a loaded CI machine; only a hang waits this long
		t.Fatal("chromium did not print its DevTools URL")
	}
	panic("unreachable")
}

// TestCanarySecretNeverLands signs on with a canary password through the
// engine and through the real binary, then searches every file under the
// data directory, the logs and the binary's output for it.
func TestCanarySecretNeverLands(t *testing.T) {
	t.Parallel()
	const canary = "Canary-9d71-Pw!x"
	b := setup(t, mockapp.Options{Operator: operator, Password: canary})
	rec := b.run(t, runSpec{cap: load(t, lookup), inputs: member("12345"), password: canary})
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("in-process run: %s %s", rec.Status, rec.Message)
	}

	// The real binary, secret from the environment.
	cmd := exec.Command(binPath, "replay", filepath.Join(examples, lookup+".yaml"), "--input", "member_id=12345",
		"--base-url", b.app.URL(), "--data-dir", b.dataDir, "--json")
	cmd.Env = append(os.Environ(), "CUA_SECRET_COREBANK_OPERATOR="+operator, "CUA_SECRET_COREBANK_PASSWORD="+canary)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cua replay: %v\n%s", err, out)
	}
	if strings.Contains(string(out), canary) {
		t.Error("the canary is in the binary's output")
	}
	if strings.Contains(b.logs.String(), canary) {
		t.Error("the canary is in the logs")
	}
	files := 0
	err = filepath.Walk(b.dataDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, form := range []string{canary, url.QueryEscape(canary), strings.ReplaceAll(canary, "!", `\u0021`)} {
			if strings.Contains(string(data), form) {
				t.Errorf("the canary (%q) is in %s", form, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Fatalf("only %d evidence files under %s: the runs left no evidence to search", files, b.dataDir)
	}
	t.Logf("%d evidence files searched", files)
}
