package console

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// TestTakeoverTransfer drives the real console page in a second headless
// Chromium through a transfer that parks twice:
//
//   - at its review gate, two operators race to claim (exactly one wins);
//     the winner's live picture has the sensitive member number painted
//     black (checked by pixel on a saved screenshot); the operator clicks
//     the Amount field, types a new amount, clicks Review transfer,
//     releases (an input at the old epoch is then refused) and resumes;
//   - the run goes on past the review the person did and parks at the
//     submit gate; the operator presses Submit transfer and the browser's
//     confirm OK, each irreversible and confirmed in the page, releases
//     and resumes;
//
// and the run succeeds reading the confirmation, with exactly one ledger
// entry (the person's amount), the person's actions recorded with actor
// human and the principal's name (each operator signed in with their own
// principal token) and the engine's with actor automation. It logs the console's
// frames per second and its input-to-screen latency.
func TestTakeoverTransfer(t *testing.T) {
	ctx := t.Context()
	// The operator types another amount: the effect contract would refute it.
	lib := library(t, withoutContract(t)...)
	l, err := lib.Lookup("memberdesk.transfer_funds")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := openConsole(t, filepath.Join(t.TempDir(), "cua.db"))
	appc := mockapp.NewClient(app.URL(), nil)
	if err := appc.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	sess, err := engineBrowser.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	const runID = "run-takeover"
	dataDir := t.TempDir()
	type result struct {
		rec *domain.RunRecord
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := replay.Run(ctx, replay.Options{Capability: l, Library: lib, BaseURL: app.URL(), Surface: sess,
			Inputs:  map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			Secrets: secrets{"corebank_operator": "OP1001", "corebank_password": "teller-pass-1"}, Redactor: redact.New(),
			DataDir: dataDir, RunID: runID, Park: srv, ParkTimeout: 5 * time.Minute, StepWait: 10 * time.Second})
		done <- result{rec, err}
	}()
	alice, bob := openTab(t, srv, "alice"), openTab(t, srv, "bob")
	alice.watch(runID)
	bob.watch(runID)
	op := race(t, alice, bob)
	lv := liveSession(t, srv, runID)
	checkMasked(t, op, lv)

	// Type a new amount: click the field, clear it, type.
	focusNode(t, op, lv, "textbox", "Amount")
	op.do("focus the picture", chromedp.Focus(chromedp.ID("screen")))
	for range 5 {
		op.do("backspace", chromedp.KeyEvent(kb.End), chromedp.KeyEvent(kb.Backspace))
		op.idle()
	}
	measure(t, op, "30.00")
	if v := nodeValue(t, lv, "textbox", "Amount"); v != "30.00" {
		t.Fatalf("Amount holds %q after the operator typed, want 30.00", v)
	}
	// The pointer lands on the button's label: the console sends the click
	// to that text node and classifies it by the button. An operator whose
	// click did not take clicks again; the review page is what counts.
	for try := 1; ; try++ {
		op.clickNode(lv, "button", "Review transfer")
		if st := op.status(); st != `sent to button "Review transfer"` && st != `sent to text "Review transfer"` {
			t.Fatalf("Review transfer: %s", st)
		}
		if shows(t, lv, 20*time.Second, "heading", "Review Transfer", func(domain.Node) bool { return true }) {
			break // the operator sees the page before handing back
		}
		if try == 3 {
			t.Fatal("the parked page never showed heading \"Review Transfer\" after three clicks on Review transfer")
		}
		t.Logf("no review page 20 s after click %d on Review transfer: clicking again", try)
	}
	epoch := evalIn[float64](op, "epoch", `window.cuaConsole.epoch()`)
	op.do("release", chromedp.Click(chromedp.ID("release")))
	op.poll("released", `document.getElementById('status').textContent === 'released'`)
	stale := signIn(t, srv, opName(op, alice))
	code, body := stale.post(t, "/api/input?session="+runID, srv.URL(), stale.csrf,
		fmt.Sprintf(`{"kind":"click","x":20,"y":20,"epoch":%d}`, int(epoch)))
	if code != 403 || !strings.Contains(body, "LEASE_LOST") {
		t.Fatalf("input at the released epoch: %d %s, want 403 LEASE_LOST", code, body)
	}
	op.resume()

	// The run goes on and parks again at the submit gate.
	select {
	case res := <-done:
		t.Fatalf("the run ended after the first resume: %+v %v", res.rec, res.err)
	default:
	}
	waitParkedAt(t, srv, runID, "submit")
	op.watch(runID)
	op.claim()
	lv = liveSession(t, srv, runID)
	op.clickNode(lv, "button", "Submit transfer")
	op.confirm("confirm the submit")
	op.idle()
	op.do("answer the dialog", chromedp.WaitVisible(chromedp.ID("dialog-ok")), chromedp.Click(chromedp.ID("dialog-ok")))
	op.idle()
	op.confirm("confirm the OK")
	op.idle()
	waitScreen(t, lv, "heading", "Transfer Complete")
	op.do("release", chromedp.Click(chromedp.ID("release")))
	op.poll("released", `document.getElementById('status').textContent === 'released'`)
	op.resume()

	var res result
	select {
	case res = <-done:
	case <-time.After(120 * time.Second): // only a run that never finishes waits this long
		t.Fatal("the run did not finish after the resume")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	rec := res.rec
	if rec.Status != domain.StatusSuccess || !strings.HasPrefix(fmt.Sprint(rec.Outputs["confirmation"]), "TRF-") {
		t.Fatalf("run = %s %s %q outputs %v", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	ledger, err := appc.Ledger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ledger) != 1 || ledger[0].Amount != "30.00" {
		t.Fatalf("ledger = %+v, want exactly one transfer of 30.00", ledger)
	}
	checkActors(t, filepath.Join(dataDir, "runs", runID, "events.jsonl"), opName(op, alice))
}

// race has both operators press Claim at once and returns the one that
// won; the other must have been refused.
func race(t *testing.T, a, b *operatorTab) *operatorTab {
	t.Helper()
	var wg sync.WaitGroup
	for _, o := range []*operatorTab{a, b} {
		wg.Go(func() {
			_ = chromedp.Do(o.ctx, chromedp.Click(chromedp.ID("claim")))
		})
	}
	wg.Wait()
	var won []*operatorTab
	for _, o := range []*operatorTab{a, b} {
		o.poll("claim answered", `window.cuaConsole.epoch() > 0 || document.getElementById('status').textContent.startsWith('claim refused')`)
		if evalIn[float64](o, "epoch", `window.cuaConsole.epoch()`) > 0 {
			won = append(won, o)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d operators won the claim, want exactly 1", len(won))
	}
	return won[0]
}

func opName(o, alice *operatorTab) string {
	if o == alice {
		return "alice"
	}
	return "bob"
}

func liveSession(t *testing.T, srv *Server, id string) *live {
	t.Helper()
	lv, ok := srv.session(id)
	if !ok {
		t.Fatalf("session %s is not live", id)
	}
	return lv
}

func waitParkedAt(t *testing.T, srv *Server, id, step string) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second) // a passing wait ends when the run parks
	var rows []hitl.Waiting
	for time.Now().Before(deadline) {
		var err error
		rows, err = srv.cfg.Broker.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range rows {
			if w.SessionID == id && w.Step == step && w.Lease != nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("session %s did not park at %s; waiting: %+v", id, step, rows)
}

// waitScreen waits until the parked page shows the node (generously: on
// CI's shared cores a form post behind the console can take many seconds).
func waitScreen(t *testing.T, lv *live, role, name string) {
	t.Helper()
	if !shows(t, lv, 120*time.Second, role, name, func(domain.Node) bool { return true }) {
		t.Fatalf("the parked page never showed %s %q", role, name)
	}
}

// shows reports whether the parked page shows a node of role and name
// that ok accepts within timeout, observing every 50 ms.
func shows(t *testing.T, lv *live, timeout time.Duration, role, name string, ok func(domain.Node) bool) bool {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		lv.mu.Lock()
		snap, err := lv.observe(t.Context())
		lv.mu.Unlock()
		if err != nil {
			continue
		}
		for _, n := range snap.Nodes {
			if n.Role == role && n.Name == name && ok(n) {
				return true
			}
		}
	}
	return false
}

// focusNode clicks a field on the live picture until the parked page
// shows it focused, as an operator clicks again when the caret is not
// there: on a loaded machine the first frame can arrive after the first
// click was aimed, and keys go to whatever has focus.
func focusNode(t *testing.T, op *operatorTab, lv *live, role, name string) {
	t.Helper()
	for range 3 {
		op.clickNode(lv, role, name)
		if shows(t, lv, 10*time.Second, role, name, func(n domain.Node) bool { return n.States.Focused }) {
			return
		}
		t.Logf("%s %q not focused 10 s after the click: clicking again", role, name)
	}
	t.Fatalf("%s %q never took focus from a click on the live picture", role, name)
}

func nodeValue(t *testing.T, lv *live, role, name string) string {
	t.Helper()
	lv.mu.Lock()
	defer lv.mu.Unlock()
	snap, err := lv.observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range snap.Nodes {
		if n := snap.Nodes[i]; n.Role == role && n.Name == name {
			return n.Value
		}
	}
	t.Fatalf("no %s %q", role, name)
	return ""
}

// measure types text on the live picture one key at a time and logs the
// time from each key to the next frame the page shows, and the frames per
// second over the typing.
func measure(t *testing.T, o *operatorTab, text string) {
	t.Helper()
	start := time.Now()
	f0 := evalIn[float64](o, "frames", `window.cuaConsole.frames()`)
	var total time.Duration
	missed := 0
	for _, r := range text {
		n := evalIn[float64](o, "frames", `window.cuaConsole.frames()`)
		t0 := time.Now()
		o.do("type", chromedp.KeyEvent(string(r)))
		_, err := chromedp.Run(o.ctx, chromedp.Poll[bool](fmt.Sprintf(`window.cuaConsole.frames() > %d`, int(n)),
			chromedp.WithPollingTimeout(5*time.Second)))
		if err != nil {
			t.Logf("no new frame within 5s of key %q (%s)", r, o.status())
			missed++
		} else {
			total += time.Since(t0)
		}
		o.idle()
	}
	f1 := evalIn[float64](o, "frames", `window.cuaConsole.frames()`)
	el := time.Since(start)
	msg := fmt.Sprintf("console: %d frames in %s (%.1f frames/s while typing); input-to-screen latency %.0f ms per key (mean of %d)",
		int(f1-f0), el.Round(time.Millisecond), (f1-f0)/el.Seconds(), float64(total.Milliseconds())/float64(max(len(text)-missed, 1)), len(text)-missed)
	t.Log(msg)
	_ = os.WriteFile(filepath.Join(artifactDir(t), "console-latency.txt"), []byte(msg+"\n"), 0o644)
}

// artifactDir is CUA_TEST_ARTIFACTS when set, else testdata/out (ignored
// by git).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CUA_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkMasked saves a screenshot of the operator's console and checks, by
// pixel, that the sensitive member number field is black in it while the
// engine's own unmasked view of the same box is not.
func checkMasked(t *testing.T, o *operatorTab, lv *live) {
	t.Helper()
	lv.mu.Lock()
	snap, err := lv.observe(t.Context())
	sx, sy, scale := lv.scrollX, lv.scrollY, lv.scale
	raw, rerr := lv.p.Surface.Screenshot(t.Context())
	lv.mu.Unlock()
	if err != nil || rerr != nil {
		t.Fatal(err, rerr)
	}
	var box domain.Rect
	for _, n := range snap.Nodes {
		if n.Role == "textbox" && n.Name == "Member number" {
			box = n.Bounds
		}
	}
	if box.Empty() {
		t.Fatal("no Member number field on the parked page")
	}
	o.poll("a masked frame after the parked page", `window.cuaConsole.frames() > 1`)
	time.Sleep(300 * time.Millisecond) // let the newest frame paint
	shot := o.screenshot()
	if err := os.WriteFile(filepath.Join(artifactDir(t), "console-takeover.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	pic := o.pictureAt()
	in := func(data []byte, ox, oy float64) (black, all int) {
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		// Inside the box, 2 px in from each edge.
		x0, y0 := int(ox+(box.X-sx)*scale)+2, int(oy+(box.Y-sy)*scale)+2
		x1, y1 := int(ox+(box.X+box.W-sx)*scale)-2, int(oy+(box.Y+box.H-sy)*scale)-2
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				if !(image.Point{x, y}.In(img.Bounds())) {
					continue
				}
				r, g, b, _ := img.At(x, y).RGBA()
				all++
				if r < 0x0800 && g < 0x0800 && b < 0x0800 {
					black++
				}
			}
		}
		return black, all
	}
	if black, all := in(shot, pic.X, pic.Y); all == 0 || black != all {
		t.Fatalf("console screenshot: %d of %d pixels of the member number field are black, want all", black, all)
	}
	if black, all := in(raw, 0, 0); all == 0 || black == all {
		t.Fatalf("the engine's own view of the field is black too (%d of %d): the check proves nothing", black, all)
	}
}

// checkActors: the person's dispatches are raw_input with actor human, the
// engine's are automation, and both are present; every human event names
// the principal who signed in; each takeover recorded the person's delta.
func checkActors(t *testing.T, path, principal string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var human, automation int
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"type":"action_dispatched"`) {
			continue
		}
		switch {
		case strings.Contains(line, `"actor":"human"`):
			if !strings.Contains(line, `"action":"raw_input"`) {
				t.Errorf("a human dispatch that is not raw input: %s", line)
			}
			human++
		case strings.Contains(line, `"actor":"automation"`):
			automation++
		}
	}
	if human == 0 || automation == 0 {
		t.Fatalf("dispatches: %d human, %d automation; want both", human, automation)
	}
	if !strings.Contains(string(data), `"Submit transfer"`) {
		t.Errorf("no event names the Submit transfer the person pressed")
	}
	// Each of the two takeovers left a record of what the person changed.
	if n := strings.Count(string(data), `"type":"human_delta"`); n != 2 {
		t.Errorf("%d human_delta events, want one per takeover (2)", n)
	}
	checkPrincipalEvents(t, path, principal, human)
	var _ context.Context
}
