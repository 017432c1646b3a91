package servecmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

const examples = "../../../examples/capabilities"

var (
	buildOnce sync.Once
	bin       string
	buildErr  error
)

// cuaBin builds the real cua binary once per test process.
func cuaBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cua-serve-bin-")
		if err != nil {
			buildErr = err
			return
		}
		bin = filepath.Join(dir, "cua")
		out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/cua").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build cua: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// engineWorld is MemberDesk, a data directory whose catalog holds the
// example capabilities (all but home_branch) and the sensitive-input test
// capability, a principal's token, and a running cua serve on them with
// one warm worker.
type engineWorld struct {
	app   *mockapp.Server
	ctl   *mockapp.Client
	dir   string
	env   []string
	url   string // the engine
	token string // ada's, an admin principal
}

func newEngineWorld(t *testing.T) *engineWorld {
	t.Helper()
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	w := &engineWorld{app: app, ctl: mockapp.NewClient(app.URL(), nil), dir: t.TempDir()}
	w.env = append(os.Environ(), "CUA_DATA_DIR="+w.dir, "CUA_SECRET_COREBANK_OPERATOR=OP1001", "CUA_SECRET_COREBANK_PASSWORD=teller-pass-1")
	files, _ := filepath.Glob(filepath.Join(examples, "*.yaml"))
	add := []string{"catalog", "add", "../../jobs/testdata/test.sign_on_as.yaml"}
	for _, f := range files {
		if !strings.Contains(f, "home_branch") {
			add = append(add, f)
		}
	}
	for i, f := range add[2:] {
		if add[2+i], err = filepath.Abs(f); err != nil {
			t.Fatal(err)
		}
	}
	w.cuaOK(t, nil, add...)
	w.token = strings.TrimSpace(w.cuaOK(t, nil, "users", "add", "ada", "--role", "admin"))
	srv := exec.Command(cuaBin(t), "serve", "--addr", "127.0.0.1:0", "--workers", "1", "--warm-ttl", "5m",
		"--allow-origin", app.URL(), "--token", "serve-secret")
	srv.Env, srv.Dir = w.env, w.dir
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() })
	sc := bufio.NewScanner(stderr)
	for w.url == "" && sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
			w.url, _, _ = strings.Cut(rest, " ")
		}
	}
	if w.url == "" {
		t.Fatalf("cua serve printed no address: %v", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	return w
}

// cua runs the binary with extra environment; it returns stdout, stderr
// and the exit code.
func (w *engineWorld) cua(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	c := exec.Command(cuaBin(t), args...)
	c.Env, c.Dir = append(append([]string(nil), w.env...), env...), w.dir
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

func (w *engineWorld) cuaOK(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, errOut, code := w.cua(t, env, args...)
	if code != 0 {
		t.Fatalf("cua %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// jobs lists the engine's queued runs as the serve token sees them.
func (w *engineWorld) jobs(t *testing.T) []map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", w.url+"/v1/runs?limit=1000", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer serve-secret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct{ Runs []map[string]any }
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	return got.Runs
}

// summaryLines are the lines of a text summary that do not depend on the
// run (its id, its time, its steps: a warm session skips the sign-on).
func summaryLines(out string) []string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && (f[0] == "run" || f[0] == "duration" || f[0] == "steps" || f[0] == "rungs" || f[0] == "drift") {
			continue
		}
		keep = append(keep, l)
	}
	return keep
}

// sameRecord compares what a caller reads in two --json records.
func sameRecord(t *testing.T, name, local, remote string) {
	t.Helper()
	var a, b map[string]any
	if err := json.Unmarshal([]byte(local), &a); err != nil {
		t.Fatalf("%s: local --json: %v\n%s", name, err, local)
	}
	if err := json.Unmarshal([]byte(remote), &b); err != nil {
		t.Fatalf("%s: --engine --json: %v\n%s", name, err, remote)
	}
	for _, k := range []string{"status", "exit_code", "capability", "content_hash", "outcome", "failure_code", "outputs", "effects"} {
		if ja, jb := fmt.Sprint(a[k]), fmt.Sprint(b[k]); ja != jb {
			t.Errorf("%s: %s: local %s, --engine %s", name, k, ja, jb)
		}
	}
}

// TestReplayEngine drives the real binaries: a warm cua serve and cua
// replay --engine on MemberDesk print what a local cua replay prints, and
// exit as it does, for a success, a business outcome and a run that needs
// a human; the run is a queued run submitted by the token's principal.
func TestReplayEngine(t *testing.T) {
	w := newEngineWorld(t)
	capFile, _ := filepath.Abs(filepath.Join(examples, "memberdesk.savings_balance.yaml"))
	engine := []string{"CUA_PRINCIPAL_TOKEN=" + w.token}
	for _, tc := range []struct {
		name, member, fault string
		code                int
	}{
		{"success", "12345", "", 0},
		{"business outcome", "34567", "", 0},
		{"needs a human", "56789", mockapp.FaultFocusSteal, 2},
	} {
		for _, asJSON := range []bool{false, true} {
			args := []string{"replay", capFile, "--input", "member_id=" + tc.member, "--base-url", w.app.URL()}
			if asJSON {
				args = append(args, "--json")
			}
			if tc.fault != "" {
				if err := w.ctl.Arm(context.Background(), tc.fault, -1, 0); err != nil {
					t.Fatal(err)
				}
			}
			local, localErr, localCode := w.cua(t, nil, append(args, "--data-dir", t.TempDir())...)
			start := time.Now()
			remote, remoteErr, remoteCode := w.cua(t, engine, append(args, "--engine", w.url)...)
			t.Logf("%s (json %v): --engine took %s", tc.name, asJSON, time.Since(start).Round(time.Millisecond))
			if tc.fault != "" {
				if err := w.ctl.Arm(context.Background(), tc.fault, 0, 0); err != nil {
					t.Fatal(err)
				}
			}
			if localCode != tc.code || remoteCode != tc.code {
				t.Fatalf("%s: exit local %d, --engine %d; want %d\nlocal: %s%s\nengine: %s%s", tc.name, localCode, remoteCode, tc.code, local, localErr, remote, remoteErr)
			}
			if asJSON {
				sameRecord(t, tc.name, local, remote)
			} else if a, b := summaryLines(local), summaryLines(remote); strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("%s: local printed\n%s\n--engine printed\n%s", tc.name, local, remote)
			}
		}
	}
	js := w.jobs(t)
	if len(js) != 6 {
		t.Fatalf("the engine holds %d jobs, want the 6 runs", len(js))
	}
	for _, j := range js {
		args, _ := j["args"].(map[string]any)
		if by := fmt.Sprint(args["submitted_by"]); !strings.HasPrefix(by, "ada") {
			t.Errorf("job %v was submitted by %q, want ada (the token's principal)", j["id"], by)
		}
		res, _ := j["result"].(map[string]any)
		if _, err := os.Stat(filepath.Join(w.dir, "runs", fmt.Sprint(res["run_id"]), "record.json")); err != nil {
			t.Errorf("job %v: its run has no evidence in the engine's data directory: %v", j["id"], err)
		}
	}
}

// TestReplayEngineRefusals: cua replay --engine checks its flags before
// any request; an unreachable engine, a missing or refused token, a
// capability the engine does not hold and a sensitive input given as a
// value each end with an error naming it, exit 1, and nothing queued; a
// caller with no principal gets 401 from POST /v1/replay and nothing runs.
// A sensitive input given as a secret reference runs.
func TestReplayEngineRefusals(t *testing.T) {
	w := newEngineWorld(t)
	abs := func(f string) string { p, _ := filepath.Abs(f); return p }
	balance := []string{"replay", abs(filepath.Join(examples, "memberdesk.savings_balance.yaml")), "--input", "member_id=12345", "--base-url", w.app.URL()}
	good, bad := []string{"CUA_PRINCIPAL_TOKEN=" + w.token}, []string{"CUA_PRINCIPAL_TOKEN=cuap_ada_wrong"}
	signOn := []string{"replay", abs("../../jobs/testdata/test.sign_on_as.yaml"), "--base-url", w.app.URL(), "--engine", w.url}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"a local flag", good, append(balance, "--engine", "http://127.0.0.1:1", "--headful"), "--headful: not with --engine"},
		{"a bad URL", good, append(balance, "--engine", "ftp://x"), "--engine \"ftp://x\""},
		{"plain http off loopback", good, append(balance, "--engine", "http://example.com:8810"), "plain http only to a loopback engine"},
		{"no engine there", good, append(balance, "--engine", "http://127.0.0.1:1"), "--engine http://127.0.0.1:1: engine unreachable"},
		{"no token", nil, append(balance, "--engine", w.url), "--engine: no token: set CUA_PRINCIPAL_TOKEN"},
		{"a refused token", bad, append(balance, "--engine", w.url), "refused the token"},
		{"a capability it lacks", good, []string{"replay", abs(filepath.Join(examples, "memberdesk.home_branch.yaml")), "--input", "member_id=12345",
			"--base-url", w.app.URL(), "--engine", w.url}, "--engine " + w.url + ": capability memberdesk.home_branch@1.0.0: the engine does not have it"},
		{"a sensitive value", good, append(signOn, "--input", "operator=OP1001"), "--input operator: sensitive"},
	} {
		out, errOut, code := w.cua(t, tc.env, tc.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and an error containing %q", tc.name, code, out, errOut, tc.want)
		}
		if strings.Contains(errOut, "OP1001") {
			t.Errorf("%s: the error shows the sensitive value: %s", tc.name, errOut)
		}
	}
	for _, auth := range []string{"", "Bearer ", "Bearer cuap_ada_wrong"} {
		req, err := http.NewRequest("POST", w.url+"/v1/replay", strings.NewReader(
			`{"ref":"memberdesk.savings_balance@1.2.0","base_url":"`+w.app.URL()+`","inputs":{"member_id":"12345"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST /v1/replay with Authorization %q: %d, want 401", auth, res.StatusCode)
		}
	}
	if js := w.jobs(t); len(js) != 0 {
		t.Fatalf("refused calls queued %d runs: %v", len(js), js)
	}
	out := w.cuaOK(t, good, append(signOn, "--input", "operator=$secret:corebank_operator")...)
	if !strings.HasPrefix(out, "SUCCESS") || strings.Contains(out, "OP1001") {
		t.Errorf("a sensitive input as a secret reference: %s", out)
	}
	js := w.jobs(t)
	if len(js) != 1 || !strings.Contains(fmt.Sprint(js[0]["args"]), "input_secrets:map[operator:corebank_operator]") {
		t.Errorf("the queued run: %v; want one, its operator a secret reference", js)
	}
}
