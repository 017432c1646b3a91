package console

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// The package's shared parts, started once by TestMain: the engine's
// browser, the operators' browser (a second Chromium driven as a person
// would, through the console page) and the mock back office.
var (
	engineBrowser *browser.Browser
	operatorAlloc context.Context // the operators' browser
	app           *mockapp.Server
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	code := func() int {
		var err error
		if engineBrowser, err = browser.Launch(ctx, browser.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, "launch browser:", err)
			return 1
		}
		defer engineBrowser.Close()
		dir, err := os.MkdirTemp("", "cua-console-op-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browserPath()), chromedp.NoSandbox,
			chromedp.DisableGPU, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 1100),
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
		alloc, acancel := chromedp.NewExecAllocator(ctx, opts...)
		defer acancel()
		bctx, bcancel := chromedp.NewContext(alloc)
		defer bcancel()
		if err := chromedp.Do(bctx); err != nil {
			fmt.Fprintln(os.Stderr, "operator browser:", err)
			return 1
		}
		operatorAlloc = bctx
		app, err = mockapp.New(mockapp.Options{Operator: "OP1001", Password: "teller-pass-1"})
		if err == nil {
			err = app.Open()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mockapp:", err)
			return 1
		}
		defer app.Close()
		return m.Run()
	}()
	cancel()
	os.Exit(code)
}

func browserPath() string {
	if p := os.Getenv("CUA_BROWSER"); p != "" {
		return p
	}
	return browser.DefaultExecPath
}

type secrets map[string]string

func (s secrets) Secret(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set", ref)
}

// library seals the example capabilities into a temporary directory, the
// transfer with its member number sensitive and a second gate before its
// review, so a person types in the form and later presses Submit, and the
// Transfer History its effect contract reads back. Each pair of edits
// replaces text of the transfer.
func library(t *testing.T, edits ...string) *replay.DirLibrary {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"corebank.auth.sign_on.yaml", "memberdesk.transfer_history.yaml", "memberdesk.transfer_funds.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "capabilities", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if name == "memberdesk.transfer_funds.yaml" {
			text = mustReplace(t, text, "  - name: member_id\n    type: string\n", "  - name: member_id\n    type: string\n    sensitive: true\n")
			text = mustReplace(t, text, "  - id: review\n    action: click\n", "  - id: review\n    action: click\n    gate: true\n")
			// A sensitive member number cannot name a check: the copy proves
			// its record by the heading alone and says so.
			idCheck := "        - node_exists:\n            role: cell\n            name: \"{input.member_id}\"\n" +
				"            anchor: {relation: row_of, text: Member number}\n            scope: {frame: content}\n"
			text = mustReplace(t, text, idCheck, "")
			text = mustReplace(t, text, "      - node_exists:\n          role: cell\n          name: \"{input.member_id}\"\n"+
				"          anchor: {relation: row_of, text: Member number}\n          scope: {frame: content}\n", "")
			text = mustReplace(t, text, "outcomes:\n", "identity:\n  unarmed: the console test marks member_id sensitive to check its masking\noutcomes:\n")
			for i := 0; i+1 < len(edits); i += 2 {
				text = mustReplace(t, text, edits[i], edits[i+1])
			}
		}
		// Edited content gets a new hash: drop the old one before sealing.
		var kept []string
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "content_hash:") {
				kept = append(kept, line)
			}
		}
		text = strings.Join(kept, "\n")
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := capability.Seal(path); err != nil {
			t.Fatalf("seal %s: %v", name, err)
		}
	}
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("no %q to edit", old)
	}
	return strings.Replace(s, old, new, 1)
}

// operatorTab is one person's browser tab on the console.
type operatorTab struct {
	t   *testing.T
	ctx context.Context
	srv *Server
}

func openTab(t *testing.T, srv *Server, operator string) *operatorTab {
	t.Helper()
	// A browser context of its own per operator: its own cookies.
	ctx, cancel := chromedp.NewContext(operatorAlloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The tab lives through the whole test (TestTakeoverTransfer parks
	// twice and types on the live picture): only a hang meets 5 minutes.
	ctx, cancel2 := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(cancel2)
	tab := &operatorTab{t: t, ctx: ctx, srv: srv}
	tab.do("sign in",
		chromedp.Navigate(srv.URL()+"/"),
		chromedp.SendKeys(chromedp.ID("token"), tokenOf(t, srv, operator)),
		chromedp.Click(chromedp.ID("signin-button")),
		chromedp.WaitVisible(chromedp.ID("sessions")))
	if me := evalIn[string](tab, "who", `document.getElementById('me').textContent`); me != operator {
		t.Fatalf("signed in with %s's token, the page names %q", operator, me)
	}
	return tab
}

func (o *operatorTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	o.t.Helper()
	if err := chromedp.Do(o.ctx, steps...); err != nil {
		o.t.Fatalf("%s: %v", what, err)
	}
}

func evalIn[T any](o *operatorTab, what, expr string) T {
	o.t.Helper()
	v, err := chromedp.Run(o.ctx, chromedp.Evaluate[T](expr, func(p *cdpruntime.EvaluateParams) { p.AwaitPromise = new(true) }))
	if err != nil {
		o.t.Fatalf("%s: %v", what, err)
	}
	return v
}

func (o *operatorTab) poll(what, expr string) {
	o.t.Helper()
	if _, err := chromedp.Run(o.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(90*time.Second))); err != nil {
		o.t.Fatalf("%s: %v", what, err)
	}
}

// watch opens the session's live view and waits for a frame.
func (o *operatorTab) watch(session string) {
	o.t.Helper()
	// The list is rebuilt every second, so a node found by one CDP call
	// may be gone by the next: find and click the button in one script.
	o.poll("watch", fmt.Sprintf(`(() => { const b = document.querySelector('#sessions tr[data-session=%q] button.watch');
		if (!b) return false; b.click(); return true })()`, session))
	o.poll("first frame", `window.cuaConsole.frames() > 0 && document.getElementById('screen').naturalWidth > 0`)
}

// confirm waits for the page to ask for an irreversible gesture's
// confirmation and gives it; a page that never asks fails with what its
// status line says instead.
func (o *operatorTab) confirm(what string) {
	o.t.Helper()
	_, err := chromedp.Run(o.ctx, chromedp.Poll[bool](`!document.getElementById('confirm-box').hidden`,
		chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		o.t.Fatalf("%s: the page asked for no confirmation (%v); its status: %q", what, err, o.status())
	}
	o.do(what, chromedp.Click(chromedp.ID("confirm")))
}

func (o *operatorTab) claim() {
	o.t.Helper()
	o.do("claim", chromedp.Click(chromedp.ID("claim")))
	o.poll("claimed", `window.cuaConsole.epoch() > 0`)
}

// resume presses Resume once the page enables it: the page disables it
// until its resume plan, fetched every second, says nothing blocks it.
func (o *operatorTab) resume() {
	o.t.Helper()
	o.poll("resume enabled", `!document.getElementById('resume').disabled`)
	o.do("resume", chromedp.Click(chromedp.ID("resume")))
}

// idle waits until every gesture the page queued got its answer.
func (o *operatorTab) idle() {
	o.t.Helper()
	evalIn[bool](o, "idle", `window.cuaConsole.idle().then(() => true)`)
}

// clickNode clicks, on the console's live picture, the centre of the node
// of the parked page with that role and name.
func (o *operatorTab) clickNode(lv *live, role, name string) {
	o.t.Helper()
	lv.mu.Lock()
	snap, err := lv.observe(o.ctx)
	sx, sy, scale := lv.scrollX, lv.scrollY, lv.scale
	lv.mu.Unlock()
	if err != nil {
		o.t.Fatal(err)
	}
	var n *domain.Node
	for i := range snap.Nodes {
		if snap.Nodes[i].Role == role && snap.Nodes[i].Name == name && !snap.Nodes[i].Bounds.Empty() {
			n = &snap.Nodes[i]
		}
	}
	if n == nil {
		o.t.Fatalf("no %s %q on the parked page", role, name)
	}
	cx, cy := n.Bounds.Center()
	// The click is placed and sent in one script: the session list above
	// the picture is rebuilt every second, so a position measured by one
	// call can be stale by the next (CI saw a click land in the nav frame).
	// The picture may be shown scaled; the page maps offsets back itself.
	// No click is sent before a picture is shown.
	o.poll("click "+name, fmt.Sprintf(`(() => {
		const img = document.getElementById('screen'), r = img.getBoundingClientRect();
		if (!img.naturalWidth || !img.clientWidth) return false;
		const k = img.clientWidth / img.naturalWidth;
		img.dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: r.left + %f * k, clientY: r.top + %f * k}));
		return true })()`, (cx-sx)*scale, (cy-sy)*scale))
	o.idle()
}

type point struct{ X, Y float64 }

// pictureAt is where the live picture's top left corner is in the tab.
func (o *operatorTab) pictureAt() point {
	return evalIn[point](o, "locate the picture",
		`(() => { const r = document.getElementById('screen').getBoundingClientRect(); return {X: r.left, Y: r.top}; })()`)
}

func (o *operatorTab) status() string {
	return evalIn[string](o, "status", `document.getElementById('status').textContent`)
}

// screenshot captures the operator's tab as PNG.
func (o *operatorTab) screenshot() []byte {
	buf, err := chromedp.Run(o.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		o.t.Fatalf("screenshot: %v", err)
	}
	return buf
}

// withoutContract is the library edit that takes the transfer's effect
// contract out: a run whose amount a person changes during a takeover is
// judged against the amount it was asked for, so with the contract its
// read-back refutes the person's transfer (EFFECT_REFUTED).
func withoutContract(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "capabilities", "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start, stop := strings.Index(text, "    effects:\n"), strings.Index(text, "          others: 0\n")
	if start < 0 || stop < start {
		t.Fatal("the reference transfer has no effects block")
	}
	return []string{text[start : stop+len("          others: 0\n")], ""}
}
