package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/cuahq/cua/internal/evidence/evstore/evstoretest"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/store/pgtest"
)

// relayFleet is two `cua worker --park` processes and a `cua console` on
// one PostgreSQL, publishing evidence to one S3-protocol store.
type relayFleet struct {
	db, s3  string
	dirs    [2]string
	pub     string
	app     *bundle
	console string
	logs    *syncBuffer
	workers []*exec.Cmd
}

// start runs the binary in the background with env until the test ends
// (SIGTERM, then wait), its output in f.logs.
func (f *relayFleet) start(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f.logs, f.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	return cmd
}

func (f *relayFleet) env(dir string) []string {
	return []string{"CUA_DB=" + f.db, "CUA_DATA_DIR=" + dir, "CUA_SECRET_COREBANK_OPERATOR=" + operator,
		"CUA_SECRET_COREBANK_PASSWORD=" + password}
}

// cua runs one command against the fleet's store and wants exit 0.
func (f *relayFleet) cua(t *testing.T, args ...string) string {
	t.Helper()
	r := runBin(t, f.env(f.dirs[0]), args...)
	if r.code != 0 {
		t.Fatalf("cua %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// newRelayFleet starts PostgreSQL, the S3 fake, MemberDesk, the catalog
// and principals, two parking workers and a console holding the relay
// credential, and returns alice's token.
func newRelayFleet(t *testing.T) (*relayFleet, string) {
	ctx := t.Context()
	pg, err := pgtest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	if _, err := pg.CreateDatabase(ctx, "relay"); err != nil {
		t.Fatal(err)
	}
	f := &relayFleet{db: pg.URL("relay"), s3: evstoretest.Start(t).URL, app: setup(t, mockapp.Options{}), logs: &syncBuffer{}}
	f.dirs = [2]string{t.TempDir(), t.TempDir()}
	f.pub = fleetKey(t, f.dirs[0], f.dirs[1])
	files, _ := filepath.Glob(filepath.Join(examples, "*.yaml"))
	f.cua(t, append([]string{"catalog", "add"}, files...)...)
	f.cua(t, "catalog", "approve", transferRef(t), "--once", "--input", "member_id=12345",
		"--input", "from_account=Savings", "--input", "to_account=Checking", "--input", "amount=25.00")
	relayTok := strings.TrimSpace(f.cua(t, "users", "add", "console-relay", "--role", "operator"))
	alice := strings.TrimSpace(f.cua(t, "users", "add", "alice", "--role", "operator"))
	for _, dir := range f.dirs {
		f.workers = append(f.workers, f.start(t, f.env(dir), "worker", "--workers", "1", "--job-timeout", "120s", "--park", "--park-timeout", "3m",
			"--allow-origin", f.app.app.URL(), "--evidence", f.s3))
	}
	cmd := exec.Command(binPath, "console", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), append(f.env(t.TempDir()), "CUA_RELAY_TOKEN="+relayTok)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	f.console = consoleURL(t, stderr)
	return f, alice
}

// transferRef is the example transfer's id@version.
func transferRef(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examples, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version: (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the example transfer has no version")
	}
	return "memberdesk.transfer_funds@" + string(m[1])
}

// operatorClient is a person signed in to the console over HTTP.
type operatorClient struct {
	base, csrf string
	http       *http.Client
}

func signInOperator(t *testing.T, base, token string) *operatorClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &operatorClient{base: base, http: &http.Client{Jar: jar}}
	res, err := c.http.Get(base + "/")
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
	if res, err = c.http.Do(req); err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	mm := regexp.MustCompile(`<meta name="csrf" content="([0-9a-f]+)">`).FindSubmatch(page)
	if mm == nil {
		t.Fatalf("sign-in failed:\n%s", page)
	}
	c.csrf = string(mm[1])
	return c
}

func (c *operatorClient) post(t *testing.T, path string, body any, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, c.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", c.base)
	req.Header.Set("X-CSRF-Token", c.csrf)
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if out != nil {
		_ = json.Unmarshal(raw, out)
	}
	if res.StatusCode != http.StatusOK {
		t.Logf("%s: %d %s", path, res.StatusCode, raw)
	}
	return res.StatusCode
}

// waitParked lists the console's sessions until session is parked live.
func (c *operatorClient) waitParked(t *testing.T, session string, logs *syncBuffer) hitl.Waiting {
	t.Helper()
	var last string
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		res, err := c.http.Get(c.base + "/api/sessions")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		last = string(raw)
		var got struct{ Sessions []hitl.Waiting }
		_ = json.Unmarshal(raw, &got)
		for _, w := range got.Sessions {
			if w.SessionID == session && w.Lease != nil && w.Lease.State == hitl.StatePaused {
				return w
			}
		}
	}
	t.Fatalf("session %s never listed parked: %s\nlogs:\n%s", session, last, tailOf(logs.String(), 4000))
	return hitl.Waiting{}
}

// frameSize reads one masked frame of session through the console's
// socket (relayed from the worker) and returns its size; 800x600, the
// headless window, when the still page paints none in 15s.
func (c *operatorClient) frameSize(t *testing.T, session string) (float64, float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	u := strings.Replace(c.base, "http://", "ws://", 1) + "/ws?session=" + url.QueryEscape(session) + "&csrf=" + c.csrf
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: http.Header{"Origin": {c.base}}})
	if err != nil {
		t.Fatalf("screencast socket through the console: %v", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(32 << 20)
	_, data, err := conn.Read(ctx)
	if err != nil {
		t.Logf("no frame in 15s (%v): assuming 800x600", err) // a still page may paint none
		return 800, 600
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("a frame that is not a PNG: %v", err)
	}
	t.Logf("frame %dx%d", cfg.Width, cfg.Height)
	return float64(cfg.Width), float64(cfg.Height)
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestRelayFleet (issue 25 item 1): two `cua worker --park` on PostgreSQL
// and a `cua console` in a third process, evidence in an S3-protocol
// store. A transfer whose submit posts and then shows an undeclared
// Survey dialog escalates in the worker that took it and parks there; a
// lookup goes to the other worker. A scripted operator (HTTP, signed in
// with her principal token) sees the parked run in the console with its
// relay, capability, step, inputs and screen, reads a masked frame of it
// through the relayed screencast, claims it, clicks in it (hit-tested,
// authorized and dispatched by the worker) and releases it. The fleet
// then stops: the park ends first and the transfer ends NEEDS_HUMAN with
// its intervention; the ledger holds one entry, `cua observe --evidence`
// lists both workers' runs and `cua verify --evidence` passes the
// transfer's. (Finishing the transfer through Resume is not proven here:
// see the report of issue 25 item 1.)
func TestRelayFleet(t *testing.T) {
	f, alice := newRelayFleet(t)
	ctx := t.Context()
	if err := f.app.ctl.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Open(ctx, jobs.Config{DB: f.db})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var tj, lj jobs.Job
	for _, sub := range []struct {
		j    *jobs.Job
		args []string
	}{
		{&tj, []string{transferRef(t), "-i", "member_id=12345", "-i", "from_account=Savings", "-i", "to_account=Checking",
			"-i", "amount=25.00", "--unattended", "--release-gate", "submit", "--idempotency-key", "pay-relay-1"}},
		{&lj, []string{"memberdesk.savings_balance@1.2.0", "-i", "member_id=23456"}},
	} {
		out := f.cua(t, append([]string{"submit", "--json", "--base-url", f.app.app.URL()}, sub.args...)...)
		if err := json.Unmarshal([]byte(out), sub.j); err != nil {
			t.Fatalf("submit: %v\n%s", err, out)
		}
	}
	session := jobs.RunID(tj.ID, 1)
	op := signInOperator(t, f.console, alice)
	row := op.waitParked(t, session, f.logs)
	if row.Relay == "" || row.Capability != transferRef(t) || row.Step == "" || row.Inputs["amount"] != "25.00" {
		t.Errorf("the parked row = %+v; want its relay, capability, step and inputs", row)
	}
	t.Logf("parked: step %s, %s: %s; screen %q", row.Step, row.FailureCode, row.Summary, row.Screen)
	w, h := op.frameSize(t, session)
	var st hitl.Status
	if code := op.post(t, "/api/claim", map[string]any{"session": session}, &st); code != http.StatusOK || st.Holder != "human:alice" {
		t.Fatalf("claim: %d %+v", code, st)
	}
	clickSurvey(t, op, session, st.Epoch, w, h)
	if code := op.post(t, "/api/release", map[string]any{"session": session, "epoch": st.Epoch}, nil); code != http.StatusOK {
		t.Fatalf("release: %d", code)
	}
	wctx, cancel := context.WithTimeout(ctx, 150*time.Second)
	defer cancel()
	look, err := q.Wait(wctx, lj.ID, 200*time.Millisecond)
	if err != nil || look.Result == nil || look.Result.Status != "SUCCESS" {
		t.Fatalf("the lookup: %+v %v", look, err)
	}
	// The fleet stops: the parked run's park ends first, so it ends
	// NEEDS_HUMAN with its intervention, as a worker without --park ends it.
	for _, c := range f.workers {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	done, err := q.Wait(wctx, tj.ID, 200*time.Millisecond)
	if err != nil || done.Result == nil || !done.Result.NeedsHuman || done.Result.Intervention != "iv-"+session {
		t.Fatalf("transfer job after the stop: %+v %v\nlogs:\n%s", done, err, tailOf(f.logs.String(), 4000))
	}
	if len(done.AttemptedBy) != 1 || len(look.AttemptedBy) != 1 || done.AttemptedBy[0] == look.AttemptedBy[0] {
		t.Errorf("the lookup worked by %v, the transfer by %v; want the two workers", look.AttemptedBy, done.AttemptedBy)
	}
	if l, err := f.app.ctl.Ledger(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ledger: %d entries, %v; want 1", len(l), err)
	}
	observeLists(t, f.s3, t.TempDir(), done.Result.RunID, look.Result.RunID)
	if r := runBin(t, nil, "verify", done.Result.RunID, "--evidence", f.s3, "--key", f.pub, "--data-dir", t.TempDir()); r.code != 0 || !strings.Contains(r.stdout, "share_ready: true") {
		t.Errorf("verify the transfer from the store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// clickSurvey clicks where MemberDesk's stylesheet places the Survey
// dialog's "No thanks" button (the dialog is fixed 20% from the top and
// 15% from the left, 2px border, 1em 2em padding, the button under one
// paragraph) and wants the worker to have sent it. The estimate ignores
// MemberDesk's navigation frame, so the click lands beside the button
// (logged): the test does not resume (cua demo's takeover stage finishes
// such a run, finding the button in the live picture).
func clickSurvey(t *testing.T, op *operatorClient, session string, epoch uint64, w, h float64) {
	t.Helper()
	var out struct {
		Dispatched   bool   `json:"dispatched"`
		Name         string `json:"name"`
		NeedsConfirm bool   `json:"needs_confirm"`
		Error        string `json:"error"`
	}
	in := map[string]any{"kind": "click", "x": 0.15*w + 2 + 32 + 25, "y": 0.2*h + 2 + 16 + 50 + 10, "epoch": epoch}
	op.post(t, "/api/input?session="+url.QueryEscape(session), in, &out)
	if out.NeedsConfirm {
		in["confirm"] = true
		op.post(t, "/api/input?session="+url.QueryEscape(session), in, &out)
	}
	if !out.Dispatched {
		t.Fatalf("the click on No thanks was not sent: %+v", out)
	}
	t.Logf("clicked %q", out.Name)
}
