package console

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestReconnectSameOperator parks the transfer at its review gate; alice
// claims it in one browser context, then opens the console in a second
// browser context (a new browser: its own cookies) signed in with the
// same principal token. The second page shows the hold as alice's with
// its expiry, picks the claim up at the same epoch with Claim, and acts
// (Review transfer is sent and the page moves). Bob, in a third context,
// sees the hold as alice's, is refused the claim and any input.
func TestReconnectSameOperator(t *testing.T) {
	srv, _ := openConsole(t, filepath.Join(t.TempDir(), "cua.db"))
	const runID = "run-reconnect"
	startTransfer(t, srv, runID)
	waitParkedAt(t, srv, runID, "review")
	first := openTab(t, srv, "alice")
	first.watch(runID)
	first.claim()
	epoch := evalIn[float64](first, "epoch", `window.cuaConsole.epoch()`)

	second := openTab(t, srv, "alice")
	second.watch(runID)
	second.poll("the hold shown with its expiry", `(() => { const h = document.getElementById('holder').textContent;
		return h.startsWith('held by alice until ') && h.includes(' UTC') && h.includes('your claim from another tab') })()`)
	second.claim()
	if e := evalIn[float64](second, "epoch", `window.cuaConsole.epoch()`); e != epoch {
		t.Fatalf("the second browser picked the claim up at epoch %v, the first holds %v", e, epoch)
	}
	second.poll("holder without the hint", `(() => { const h = document.getElementById('holder').textContent;
		return h.startsWith('held by alice until ') && !h.includes('another tab') })()`)
	lv := liveSession(t, srv, runID)
	second.clickNode(lv, "button", "Review transfer")
	if st := second.status(); !strings.HasPrefix(st, "sent to ") {
		t.Fatalf("the reconnected page's click: %q, want sent", st)
	}
	waitScreen(t, lv, "heading", "Review Transfer")

	bob := openTab(t, srv, "bob")
	bob.watch(runID)
	bob.poll("bob sees alice's hold", `document.getElementById('holder').textContent.startsWith('held by alice until ')`)
	bob.do("claim", chromedp.Click(chromedp.ID("claim")))
	bob.poll("claim refused", `document.getElementById('status').textContent.startsWith('claim refused')`)
	if e := evalIn[float64](bob, "epoch", `window.cuaConsole.epoch()`); e != 0 {
		t.Fatalf("bob's page holds epoch %v after a refused claim", e)
	}
	bobAPI := signIn(t, srv, "bob")
	code, body := bobAPI.post(t, "/api/input?session="+runID, srv.URL(), bobAPI.csrf,
		fmt.Sprintf(`{"kind":"click","x":20,"y":20,"epoch":%d}`, int(epoch)))
	if code != http.StatusForbidden {
		t.Fatalf("bob's input at alice's epoch: %d %s, want 403", code, body)
	}
}
