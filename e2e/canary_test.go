package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/mockapp"
)

// canaryPassword is the mock app's sign-on password in TestCanarySecret.
// It is long enough (24) that every 12-character piece of it is checked.
const canaryPassword = "Cnry-Pw5tV8-qL2mHx7e-91Z"

// canaryForms lists the spellings of secret that must appear nowhere:
// plain, base64 (standard, URL, unpadded), URL-encoded, hex (both cases),
// and every 12-character substring (compared case-insensitively).
func canaryForms(secret string) []string {
	forms := []string{
		secret,
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.URLEncoding.EncodeToString([]byte(secret)),
		base64.RawStdEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret),
		url.PathEscape(secret),
		hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte(secret))),
	}
	for i := 0; i+12 <= len(secret); i++ {
		forms = append(forms, secret[i:i+12])
	}
	return forms
}

// leaks returns where in data any form of secret appears. Pieces are also
// looked for in data with its whitespace dropped, as the redactor compares,
// so a page that spaced a secret out ("C n r y - P w 5 …") is caught too.
func leaks(data []byte, secret string) []string {
	var found []string
	lower := bytes.ToLower(data)
	for _, f := range canaryForms(secret) {
		if bytes.Contains(data, []byte(f)) || bytes.Contains(lower, []byte(strings.ToLower(f))) {
			found = append(found, fmt.Sprintf("form %q", f))
		}
	}
	// UTF-16LE, as a browser's memory (a crash dump) holds strings.
	for i := 0; i+12 <= len(secret); i++ {
		if bytes.Contains(data, utf16le(secret[i:i+12])) {
			found = append(found, fmt.Sprintf("piece %q in UTF-16", secret[i:i+12]))
			break
		}
	}
	squeezed := bytes.Join(bytes.Fields(lower), nil)
	ls := strings.ToLower(secret)
	for i := 0; i+12 <= len(ls); i++ {
		if bytes.Contains(squeezed, []byte(ls[i:i+12])) {
			found = append(found, fmt.Sprintf("piece %q with whitespace dropped", ls[i:i+12]))
			break
		}
	}
	return found
}

// utf16le encodes ASCII s as UTF-16 little-endian.
func utf16le(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i], 0)
	}
	return out
}

// scanTree checks every regular file under dir.
func scanTree(t *testing.T, label, dir, secret string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // a socket or a file Chromium removed meanwhile
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		n++
		if l := leaks(data, secret); len(l) > 0 {
			t.Errorf("%s: %s holds the canary: %v", label, p, l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// echoProxy stands in front of the mock app like a hostile page: once a
// password was posted, every HTML page it serves shows a transformed piece
// of it (16 characters, upper-cased, spaced out), so the password reaches
// what the engine reads and the redactor must catch it on every sink.
// With hijack, the welcome heading itself is replaced by the piece, so the
// sign-on's postcondition fails and the run's failure evidence (snapshot,
// message) quotes the page.
func echoProxy(t *testing.T, target string, hijack bool) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen string
	p := httputil.NewSingleHostReverseProxy(u)
	direct := p.Director
	p.Director = func(r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			raw, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if v, err := url.ParseQuery(string(raw)); err == nil && v.Get("password") != "" {
				mu.Lock()
				seen = v.Get("password")
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(raw))
			r.ContentLength = int64(len(raw))
		}
		direct(r)
		// MemberDesk answers a foreign Host 421 and a foreign Origin 403:
		// the proxy speaks to it as itself.
		r.Host = u.Host
		if r.Header.Get("Origin") != "" {
			r.Header.Set("Origin", u.Scheme+"://"+u.Host)
		}
		r.Header.Del("Accept-Encoding")
	}
	p.ModifyResponse = func(resp *http.Response) error {
		mu.Lock()
		pw := seen
		mu.Unlock()
		if pw == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		piece := strings.Join(strings.Split(strings.ToUpper(pw[2:min(len(pw), 18)]), "-"), " - ")
		body = bytes.Replace(body, []byte("</body>"), []byte("<p>Last sign-on key: "+piece+"</p></body>"), 1)
		if hijack {
			body = bytes.ReplaceAll(body, []byte("Welcome"), []byte("Key "+piece))
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
		return nil
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCanarySecret replays the sign-on with the real binary against a page
// that echoes the password transformed (echoProxy), the password a canary
// given once by environment and once by --secrets file, with HOME
// and TMPDIR pointed at fresh directories, and checks that no byte of the
// data dir, stdout, stderr (the log), or any file written under TMPDIR or
// HOME holds the canary in any form. It kills a mutation that writes the
// resolved value to any of those (a log line, an event, a temp file). It
// does not kill "redaction off": no sink of this flow carries page text,
// even when the run fails (the hijack case). TestCanaryEchoedBack does: its
// page echoes the canary into an alert the failure message quotes; and
// TestCanaryKilledRenderer ends the run with crashed renderers and scans
// Chromium's environment and live profile.
func TestCanarySecret(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{Operator: operator, Password: canaryPassword})
	capFile := filepath.Join(examples, "corebank.auth.sign_on.yaml")
	for _, via := range []string{"env", "file", "hijack"} {
		t.Run(via, func(t *testing.T) {
			base := echoProxy(t, b.app.URL(), via == "hijack")
			// Short: Chromium's socket path under TMPDIR must fit in 108 bytes.
			root, err := os.MkdirTemp("", "cn")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			home, tmp, data, priv := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "data"), t.TempDir()
			for _, d := range []string{home, tmp, data} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"replay", capFile, "--base-url", base, "--data-dir", data, "--json"}
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8",
				"CUA_SECRET_COREBANK_OPERATOR=" + operator}
			switch via {
			case "env", "hijack":
				env = append(env, "CUA_SECRET_COREBANK_PASSWORD="+canaryPassword)
			case "file":
				sf := filepath.Join(priv, "secrets.json")
				if err := os.WriteFile(sf, []byte(`{"corebank_password":"`+canaryPassword+`"}`), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--secrets", sf)
			}
			cmd := exec.Command(binPath, args...)
			cmd.Env = env
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err = cmd.Run()
			if via == "hijack" {
				// The page hid the Welcome heading: the run must end failed
				// or with a human, and say so without the canary.
				if err == nil || !strings.Contains(out.String(), `"status"`) {
					t.Fatalf("replay on a hijacked page: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
				}
			} else if err != nil {
				t.Fatalf("replay: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
			} else if !strings.Contains(out.String(), `"SUCCESS"`) {
				t.Fatalf("the sign-on did not succeed, so the canary was never typed:\n%s", out.String())
			}
			if l := leaks(out.Bytes(), canaryPassword); len(l) > 0 {
				t.Errorf("stdout holds the canary: %v", l)
			}
			if l := leaks(errb.Bytes(), canaryPassword); len(l) > 0 {
				t.Errorf("stderr holds the canary: %v", l)
			}
			if n := scanTree(t, "data dir", data, canaryPassword); n == 0 {
				t.Errorf("the data dir holds no file; the run wrote no evidence")
			}
			scanTree(t, "HOME", home, canaryPassword)
			scanTree(t, "TMPDIR", tmp, canaryPassword)
		})
	}
}

// TestCanaryFormsCatchLeak proves the scanner sees each form (a scanner
// that finds nothing would pass TestCanarySecret vacuously).
func TestCanaryFormsCatchLeak(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"x" + canaryPassword + "y",
		"first64=" + strings.ToUpper(canaryPassword[3:17]),
		"spaced: " + strings.Join(strings.Split(canaryPassword[5:19], ""), " "),
		"wrapped: " + canaryPassword[:8] + "\n\t" + canaryPassword[8:14],
		base64.StdEncoding.EncodeToString([]byte(canaryPassword)),
		url.QueryEscape(canaryPassword),
		hex.EncodeToString([]byte(canaryPassword)),
		"dump:" + string(utf16le(canaryPassword[6:20])),
	} {
		if len(leaks([]byte(text), canaryPassword)) == 0 {
			t.Errorf("leaks(%q) found nothing", text)
		}
	}
	if l := leaks([]byte("Cnry-Pw5tV8 nothing else"), canaryPassword); len(l) != 0 {
		t.Errorf("an 11-character piece counted as a leak: %v", l)
	}
}

// TestSigtermStopsValidate sends SIGTERM to `cua capability validate`
// busy on large files and wants it gone within a second.
func TestSigtermStopsValidate(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile(filepath.Join(examples, "corebank.auth.sign_on.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(base)
	s = s[:strings.Index(s, "content_hash:")]
	i := strings.Index(s, "recovery:")
	var sb strings.Builder
	sb.WriteString(s[:i])
	sb.WriteString("  - code: big\n    when:\n      text_present: {text: x}\n    returns:\n")
	for k := 200000; k > 0; k-- {
		fmt.Fprintf(&sb, "      k%07d: v\n", k)
	}
	sb.WriteString(s[i:])
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"capability", "validate"}
	for range 40 {
		args = append(args, big)
	}
	cmd := exec.Command(binPath, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("validate ended before the signal (%v); the input is too small to test cancellation", err)
	default:
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		d := time.Since(sent)
		t.Logf("validate exited %s after SIGTERM", d.Round(time.Millisecond))
		// The bound is the command's promise (SIGTERM's one-second budget),
		// not a wait for the machine: it is kept.
		if d > time.Second {
			t.Errorf("exit %v after SIGTERM, want within 1s", d)
		}
		if cmd.ProcessState.ExitCode() == 0 {
			t.Errorf("exit 0 after SIGTERM; stderr:\n%s", errb.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("validate still running 5s after SIGTERM")
	}
}
