package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/mockapp"
)

// takeoverWait bounds the takeover stage.
const takeoverWait = 6 * time.Minute

// consoleAt is the line `cua console` prints when it listens.
var consoleAt = regexp.MustCompile(`console: (http://127\.0\.0\.1:\d+)/`)

// takeoverStage is a takeover across processes, on the real binary: a
// `cua worker --park` works an approved transfer whose submit posts and
// then shows an undeclared Survey dialog; the run escalates and parks in
// the worker's session relay. A `cua console` in another process, holding
// the relay credential, lists it; a scripted operator (alice) in a
// Chromium of her own signs in, watches the relayed screencast, claims
// the session, clicks "No thanks" on the live picture (hit-tested,
// authorized and dispatched by the worker), releases and resumes. The
// stage passes when the job ends SUCCESS, the ledger holds exactly one
// entry and the run's intervention, if one was queued, is resolved landed
// by alice.
func (e *env) takeoverStage(ctx context.Context) *Result {
	ref := transferCap + "@" + transferVersion
	r := &Result{Stage: Stage{Name: "takeover: worker's transfer finished in the console", Capability: ref,
		WantStatus: domain.StatusSuccess, WantLedger: 1, WantDispatches: -1}}
	ctx, cancel := context.WithTimeout(ctx, takeoverWait)
	defer cancel()
	f, err := e.fleetDir("takeover-", "corebank.auth.sign_on", "memberdesk.transfer_history", transferCap)
	if err != nil {
		return r.fail("%v", err)
	}
	defer f.stop()
	detail, err := f.takeover(ctx, ref)
	if err != nil {
		return r.fail("%v (logs under %s)", err, f.dir)
	}
	r.Pass, r.Detail = true, detail
	return r
}

// takeover runs the stage in f and summarizes it.
func (f *fleet) takeover(ctx context.Context, ref string) (string, error) {
	inputs := []string{"member_id=12345", "from_account=Savings", "to_account=Checking", "amount=25.00"}
	approve := []string{"catalog", "approve", ref, "--once"}
	submit := []string{"submit", ref, "--json", "--unattended", "--release-gate", "submit", "--idempotency-key", "demo-takeover-1", "--base-url", f.e.base}
	for _, in := range inputs {
		approve, submit = append(approve, "--input", in), append(submit, "-i", in)
	}
	if _, err := f.cua(approve...); err != nil {
		return "", err
	}
	relay, err := f.cua("users", "add", "console-relay", "--role", "operator")
	if err != nil {
		return "", err
	}
	alice, err := f.cua("users", "add", "alice", "--role", "operator")
	if err != nil {
		return "", err
	}
	alice = strings.TrimSpace(alice)
	if err := f.e.app.Reset(ctx); err != nil {
		return "", fmt.Errorf("reset mock app: %w", err)
	}
	if err := f.e.app.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		return "", fmt.Errorf("arm fault: %w", err)
	}
	if _, err := f.start("worker", "worker", "--workers", "1", "--job-timeout", "120s", "--park", "--park-timeout", "3m",
		"--allow-origin", f.e.base); err != nil {
		return "", err
	}
	console := f.command("console", "--addr", "127.0.0.1:0")
	console.Env = append(console.Env, "CUA_RELAY_TOKEN="+strings.TrimSpace(relay))
	if _, err := f.startCmd("console", console); err != nil {
		return "", err
	}
	base, err := f.waitLog(ctx, "console", consoleAt)
	if err != nil {
		return "", err
	}
	out, err := f.cua(submit...)
	if err != nil {
		return "", err
	}
	var j jobs.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		return "", fmt.Errorf("cua submit --json: %w", err)
	}
	session := jobs.RunID(j.ID, 1)
	if err := f.e.operate(ctx, base, alice, session); err != nil {
		return "", err
	}
	return f.afterTakeover(ctx, j.ID, session, alice)
}

// afterTakeover waits for the job and checks the ledger and the
// intervention queue, resolving the run's intervention landed as alice.
func (f *fleet) afterTakeover(ctx context.Context, id int64, session, alice string) (string, error) {
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(f.dir)})
	if err != nil {
		return "", fmt.Errorf("open the queue: %w", err)
	}
	defer q.Close()
	done, err := q.Wait(ctx, id, 200*time.Millisecond)
	if err != nil {
		return "", fmt.Errorf("wait for the transfer's job: %w", err)
	}
	if done.Result == nil || done.Result.Status != domain.StatusSuccess {
		return "", fmt.Errorf("the transfer's job ended %s %+v, want SUCCESS", done.State, done.Result)
	}
	ledger, err := f.e.app.Ledger(ctx)
	if err != nil {
		return "", fmt.Errorf("read ledger: %w", err)
	}
	if len(ledger) != 1 {
		return "", fmt.Errorf("ledger has %d entries, want 1", len(ledger))
	}
	list, err := f.cua("interventions", "list", "--json")
	if err != nil {
		return "", err
	}
	var ivs struct {
		Interventions []struct {
			ID     string `json:"id"`
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"interventions"`
	}
	if err := json.Unmarshal([]byte(list), &ivs); err != nil {
		return "", fmt.Errorf("cua interventions list --json: %w", err)
	}
	var seen []string
	resolved := "no intervention left open"
	for _, iv := range ivs.Interventions {
		if iv.RunID == session {
			seen = append(seen, iv.ID+" "+iv.Status)
		}
		if iv.RunID != session || iv.Status != "open" {
			continue
		}
		res := f.command("interventions", "resolve", iv.ID, "--landed", "--note", "cua demo: the ledger holds the one transfer")
		res.Env = append(res.Env, "CUA_PRINCIPAL_TOKEN="+alice)
		if out, err := res.CombinedOutput(); err != nil {
			return "", fmt.Errorf("resolve %s: %v: %s", iv.ID, err, strings.TrimSpace(string(out)))
		}
		resolved = iv.ID + " resolved landed by alice"
	}
	return fmt.Sprintf("parked in worker, claimed in console by alice in Chromium, Survey dismissed, resumed: %s %s; ledger 1 entry; interventions %v: %s",
		done.Result.RunID, done.Result.Status, seen, resolved), nil
}

// waitLog waits until <dir>/<name>.log has a line matching re and returns
// its first group.
func (f *fleet) waitLog(ctx context.Context, name string, re *regexp.Regexp) (string, error) {
	path := filepath.Join(f.dir, name+".log")
	for {
		data, _ := fsx.ReadFile(path, 1<<20)
		if m := re.FindSubmatch(data); m != nil {
			return string(m[1]), nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s never printed %s: %s", name, re, lastLine(string(data)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// operate is alice in a Chromium of her own (see [Operate]).
func (e *env) operate(ctx context.Context, base, token, session string) error {
	return Operate(ctx, e.cfg.Browser, base, token, session)
}

// Operate is alice in a Chromium of her own (browser; "" means
// $CUA_BROWSER or /usr/bin/chromium): she signs in to the console at base
// with token, watches session once it is listed parked, claims it, finds
// "No thanks" on the live picture and clicks it, releases and resumes. The
// demo's takeover stage and the fleet e2e test drive the same operator.
func Operate(ctx context.Context, browser, base, token, session string) error {
	dir, err := os.MkdirTemp("", "cua-demo-operator-")
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	defer os.RemoveAll(dir)
	exe := browser
	if exe == "" {
		exe = os.Getenv("CUA_BROWSER")
	}
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
		func() error { return pressNoThanks(tab) },
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

// findButton is what alice does with her eyes: in the live picture (a
// PNG frame of the parked page, the page under the Survey dialog darkened)
// it finds the runs of at least 20 pixels of one light grey, a button's
// face (text antialiasing gives no such run), right of the navigation
// frame's left quarter (its Search button is not under the dialog), and
// returns their centre in frame pixels with the picture's place and scale
// on the console page.
const findButton = `(() => {
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

// pressNoThanks finds the "No thanks" button on the live picture and
// clicks it; the console must say the click was sent to it.
func pressNoThanks(tab context.Context) error {
	type spot struct{ Left, Top, SX, SY, X, Y, N float64 }
	var said []string
	for try := 0; try < 5; try++ {
		g, err := chromedp.Run(tab, chromedp.Evaluate[spot](findButton))
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
			awaitPromise))
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

// awaitPromise makes an Evaluate wait for the promise its expression returns.
func awaitPromise(p *cdpruntime.EvaluateParams) { p.AwaitPromise = new(true) }
