package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/mockapp"
)

// serveClient is a caller of `cua serve`'s jobs API holding a principal's
// token.
type serveClient struct{ base, token string }

// startServe runs `cua serve --workers 0` on the fleet's PostgreSQL (its
// own data dir, loopback, a free port) and returns a client holding token.
func (f *relayFleet) startServe(t *testing.T, token string) *serveClient {
	t.Helper()
	f.start(t, f.env(t.TempDir()), "serve", "--addr", "127.0.0.1:0", "--workers", "0", "--allow-origin", f.app.app.URL())
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+) `)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := re.FindStringSubmatch(f.logs.String()); m != nil {
			return &serveClient{base: m[1], token: token}
		}
	}
	t.Fatalf("cua serve never said where it listens:\n%s", tailOf(f.logs.String(), 4000))
	return nil
}

// do sends one JSON request to the jobs API and decodes the answer into out.
func (c *serveClient) do(t *testing.T, method, path string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %v\n%s", method, path, res.StatusCode, err, raw)
	}
	return res.StatusCode
}

// submit queues a run through the API and wants 201.
func (c *serveClient) submit(t *testing.T, args map[string]any) jobs.Job {
	t.Helper()
	var j jobs.Job
	if code := c.do(t, http.MethodPost, "/v1/runs", args, &j); code != http.StatusCreated || j.ID == 0 {
		t.Fatalf("POST /v1/runs %v: %d %+v", args["ref"], code, j)
	}
	if j.Args.SubmittedBy != "alice" {
		t.Errorf("job %d submitted_by %q, want alice", j.ID, j.Args.SubmittedBy)
	}
	return j
}

// wait polls GET /v1/runs/{id} until the run has its result.
func (c *serveClient) wait(t *testing.T, id int64, logs *syncBuffer) jobs.Job {
	t.Helper()
	var j jobs.Job
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		j = jobs.Job{}
		if code := c.do(t, http.MethodGet, fmt.Sprintf("/v1/runs/%d", id), nil, &j); code == http.StatusOK && j.Result != nil && j.FinalizedAt != nil {
			return j
		}
	}
	t.Fatalf("run %d never finished: %+v\nlogs:\n%s", id, j, tailOf(logs.String(), 4000))
	return j
}

// TestRelayFleetTakeover (issue 25's Done-when): `cua serve`, two `cua
// worker --park` on PostgreSQL and `cua console` in a third process, with
// evidence in an S3-protocol store. Alice submits a transfer and a lookup
// through serve's jobs API with her principal token; the transfer, whose
// submit posts and then shows an undeclared Survey dialog, escalates and
// parks in the worker that took it, and the lookup goes to the other
// worker. Alice, in a Chromium of her own, signs in to the console,
// watches the parked run through the relayed screencast, claims it, clicks
// "No thanks" where she sees it on the live picture (dispatched by the
// worker), releases and resumes; the job ends SUCCESS and the park's
// intervention is resolved (by the resume; one left open would be
// resolved landed by her with cua interventions resolve). The ledger
// holds exactly one entry, `cua observe --evidence` lists both workers'
// runs and `cua verify --evidence` passes the transfer's.
func TestRelayFleetTakeover(t *testing.T) {
	f, alice := newRelayFleet(t)
	ctx := t.Context()
	if err := f.app.ctl.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		t.Fatal(err)
	}
	api := f.startServe(t, alice)
	inputs := map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"}
	tj := api.submit(t, map[string]any{"ref": transferRef(t), "base_url": f.app.app.URL(), "inputs": inputs, "unattended": true,
		"release_gates": []string{"submit"}, "idempotency_key": "pay-takeover-1"})
	lj := api.submit(t, map[string]any{"ref": "memberdesk.savings_balance@1.2.0", "base_url": f.app.app.URL(),
		"inputs": map[string]string{"member_id": "23456"}})
	session := jobs.RunID(tj.ID, 1)
	if err := operateInChromium(ctx, f.console, alice, session); err != nil {
		t.Fatalf("%v\nlogs:\n%s", err, tailOf(f.logs.String(), 4000))
	}
	done, look := api.wait(t, tj.ID, f.logs), api.wait(t, lj.ID, f.logs)
	if done.Result.Status != "SUCCESS" || look.Result.Status != "SUCCESS" {
		t.Fatalf("the transfer ended %+v, the lookup %+v; want both SUCCESS\nlogs:\n%s", done.Result, look.Result, tailOf(f.logs.String(), 4000))
	}
	if len(done.AttemptedBy) != 1 || len(look.AttemptedBy) != 1 || done.AttemptedBy[0] == look.AttemptedBy[0] {
		t.Errorf("the lookup worked by %v, the transfer by %v; want the two workers", look.AttemptedBy, done.AttemptedBy)
	}
	if l, err := f.app.ctl.Ledger(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ledger: %d entries, %v; want 1", len(l), err)
	}
	resolveLanded(t, f, alice, session)
	observeLists(t, f.s3, t.TempDir(), done.Result.RunID, look.Result.RunID)
	if r := runBin(t, nil, "verify", done.Result.RunID, "--evidence", f.s3, "--key", f.pub, "--data-dir", t.TempDir()); r.code != 0 || !strings.Contains(r.stdout, "share_ready: true") {
		t.Errorf("verify the transfer from the store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// resolveLanded resolves, as alice, every intervention of session still
// open with `cua interventions resolve --landed`, and wants the park's
// intervention in the queue and none open afterwards (Resume closes the
// park's intervention itself when the run finishes).
func resolveLanded(t *testing.T, f *relayFleet, alice, session string) {
	t.Helper()
	type ivs struct {
		Interventions []struct {
			ID     string `json:"id"`
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"interventions"`
	}
	list := func() ivs {
		var l ivs
		out := f.cua(t, "interventions", "list", "--json")
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("cua interventions list --json: %v\n%s", err, out)
		}
		return l
	}
	for _, iv := range list().Interventions {
		if iv.RunID != session || iv.Status != "open" {
			continue
		}
		r := runBin(t, append(f.env(f.dirs[0]), "CUA_PRINCIPAL_TOKEN="+alice), "interventions", "resolve", iv.ID, "--landed",
			"--note", "the ledger holds the one transfer")
		if r.code != 0 {
			t.Fatalf("resolve %s: exit %d\n%s%s", iv.ID, r.code, r.stdout, r.stderr)
		}
		t.Logf("resolved %s landed as alice", iv.ID)
	}
	var seen []string
	for _, iv := range list().Interventions {
		if iv.RunID == session {
			seen = append(seen, iv.ID+" "+iv.Status)
		}
		if iv.RunID == session && iv.Status == "open" {
			t.Errorf("intervention %s of the transfer still open", iv.ID)
		}
	}
	if len(seen) == 0 {
		t.Errorf("the parked transfer left no intervention in the queue")
	}
	t.Logf("the transfer's interventions: %v", seen)
}

// operateInChromium is alice in a Chromium of her own (as cua demo's
// takeover stage drives her): she signs in to the console at base with
// token, watches session once it is listed parked, claims it, clicks "No
// thanks" on the live picture, releases and resumes.
func operateInChromium(ctx context.Context, base, token, session string) error {
	dir, err := os.MkdirTemp("", "cua-e2e-operator-")
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	defer os.RemoveAll(dir)
	exe := os.Getenv("CUA_BROWSER")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 1100))
	alloc, cancel := chromedp.NewExecAllocator(ctx, opts...)
	defer cancel()
	tab, cancel2 := chromedp.NewContext(alloc)
	defer cancel2()
	do := func(what string, acts ...chromedp.Action[chromedp.Void]) error {
		if err := chromedp.Do(tab, acts...); err != nil {
			return fmt.Errorf("operator: %s: %w", what, err)
		}
		return nil
	}
	poll := func(what, expr string) error {
		if _, err := chromedp.Run(tab, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(150*time.Second))); err != nil {
			return fmt.Errorf("operator: %s: %w", what, err)
		}
		return nil
	}
	steps := []func() error{
		func() error {
			return do("sign in", chromedp.Navigate(base+"/"), chromedp.SendKeys(chromedp.ID("token"), token),
				chromedp.Click(chromedp.ID("signin-button")), chromedp.WaitVisible(chromedp.ID("sessions")))
		},
		func() error {
			return poll("watch", fmt.Sprintf(`(() => { const b = document.querySelector('#sessions tr[data-session=%q] button.watch');
				if (!b) return false; b.click(); return true })()`, session))
		},
		func() error {
			return poll("first frame", `window.cuaConsole.frames() > 0 && document.getElementById('screen').naturalWidth > 0`)
		},
		func() error { return do("claim", chromedp.Click(chromedp.ID("claim"))) },
		func() error { return poll("claimed", `window.cuaConsole.epoch() > 0`) },
		func() error { return clickNoThanks(tab) },
		func() error { return do("release", chromedp.Click(chromedp.ID("release"))) },
		func() error { return poll("released", `document.getElementById('status').textContent === 'released'`) },
		func() error { return poll("resume enabled", `!document.getElementById('resume').disabled`) },
		func() error { return do("resume", chromedp.Click(chromedp.ID("resume"))) },
		func() error { return poll("resumed", `document.getElementById('status').textContent === 'resumed'`) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// seeButton is what alice does with her eyes (copied from cua demo's
// takeover stage): in the live picture (the parked page, darkened under
// the Survey dialog) it finds the runs of at least 20 pixels of one light
// grey, a button's face, right of the navigation frame's left quarter, and
// returns their centre in frame pixels with the picture's place and scale
// on the console page.
const seeButton = `(() => {
  const i = document.getElementById('screen'), r = i.getBoundingClientRect();
  const c = document.createElement('canvas'); c.width = i.naturalWidth; c.height = i.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(i, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data, W = c.width, H = c.height;
  let sx = 0, sy = 0, n = 0;
  for (let y = 0; y < H; y++) {
    let run = 0, v = -1;
    for (let x = Math.floor(W / 4); x < W; x++) {
      const k = (y * W + x) * 4, grey = d[k] === d[k + 1] && d[k + 1] === d[k + 2] && d[k] >= 225 && d[k] <= 245;
      run = grey && d[k] === v ? run + 1 : (grey ? 1 : 0); v = grey ? d[k] : -1;
      if (run === 20) { sx += x - 10; sy += y; n++; }
    }
  }
  return {Left: r.left, Top: r.top, SX: i.naturalWidth / i.clientWidth, SY: i.naturalHeight / i.clientHeight, X: n ? sx / n : 0, Y: n ? sy / n : 0, N: n};
})()`

// clickNoThanks finds "No thanks" on the live picture and clicks it; the
// console must say the click was sent to that button.
func clickNoThanks(tab context.Context) error {
	type spot struct{ Left, Top, SX, SY, X, Y, N float64 }
	var said []string
	for try := 0; try < 5; try++ {
		g, err := chromedp.Run(tab, chromedp.Evaluate[spot](seeButton))
		if err != nil || g.SX == 0 || g.SY == 0 {
			return fmt.Errorf("operator: the live picture: %v %+v", err, g)
		}
		if g.N == 0 {
			said = append(said, "no button in the picture")
			time.Sleep(time.Second)
			continue
		}
		if err := chromedp.Do(tab, chromedp.MouseClickXY(g.Left+g.X/g.SX, g.Top+g.Y/g.SY)); err != nil {
			return fmt.Errorf("operator: click: %w", err)
		}
		st, err := chromedp.Run(tab, chromedp.Evaluate[string](`window.cuaConsole.idle().then(() => document.getElementById('status').textContent)`,
			func(p *cdpruntime.EvaluateParams) { p.AwaitPromise = new(true) }))
		if err != nil {
			return fmt.Errorf("operator: status: %w", err)
		}
		said = append(said, fmt.Sprintf("(%.0f,%.0f) %s", g.X, g.Y, st))
		if strings.HasPrefix(st, "sent to ") && strings.Contains(st, `"No thanks"`) {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("operator: no click landed on No thanks: %s", strings.Join(said, " | "))
}
