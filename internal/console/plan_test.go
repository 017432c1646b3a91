package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/runtime"
)

// runResult is how a parked transfer run ended.
type runResult struct {
	rec *domain.RunRecord
	err error
}

// startTransfer resets MemberDesk and runs the transfer (amount 25.00, no
// --allow-irreversible) parking in srv; it waits, at the test's end, for
// the run to stop.
func startTransfer(t *testing.T, srv *Server, runID string) (*mockapp.Client, <-chan runResult) {
	t.Helper()
	ctx := t.Context()
	lib := library(t)
	l, err := lib.Lookup("memberdesk.transfer_funds")
	if err != nil {
		t.Fatal(err)
	}
	appc := mockapp.NewClient(app.URL(), nil)
	if err := appc.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	sess, err := engineBrowser.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	done, ended := make(chan runResult, 1), make(chan struct{})
	go func() {
		defer close(ended)
		rec, err := replay.Run(ctx, replay.Options{Capability: l, Library: lib, BaseURL: app.URL(), Surface: sess,
			Inputs:  map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			Secrets: secrets{"corebank_operator": "OP1001", "corebank_password": "teller-pass-1"}, Redactor: redact.New(),
			DataDir: dataDir, RunID: runID, Park: srv, ParkTimeout: 5 * time.Minute, StepWait: 10 * time.Second})
		done <- runResult{rec, err}
	}()
	t.Cleanup(func() {
		<-ended // t.Context is canceled by now: a parked run gives up
		sess.Close()
	})
	return appc, done
}

// planOf fetches the session's resume plan as c.
func planOf(t *testing.T, c *client, session string) runtime.ResumePlan {
	t.Helper()
	var out struct {
		Plan *runtime.ResumePlan `json:"plan"`
	}
	if err := json.Unmarshal([]byte(c.get(t, "/api/plan?session="+session)), &out); err != nil {
		t.Fatal(err)
	}
	if out.Plan == nil {
		t.Fatal("the parked transfer gives no resume plan")
	}
	return *out.Plan
}

// aheadStep returns the plan's step id ahead, failing when it is missing.
func aheadStep(t *testing.T, p runtime.ResumePlan, id string) runtime.PlanStep {
	t.Helper()
	for _, s := range p.Ahead {
		if s.Step == id {
			return s
		}
	}
	t.Fatalf("plan %+v has no step %s ahead", p, id)
	return runtime.PlanStep{}
}

// resumeRefused posts a resume as c and wants 409 naming want.
func resumeRefused(t *testing.T, c *client, session, want string) {
	t.Helper()
	code, body := c.post(t, "/api/resume", c.srv.URL(), c.csrf, `{"session":"`+session+`"}`)
	if code != http.StatusConflict || !strings.Contains(body, want) {
		t.Fatalf("resume: %d %s, want 409 naming %q", code, body, want)
	}
}

// TestResumePlanTransfer parks the transfer (run without
// --allow-irreversible) in the console and checks what Resume would do:
//
//   - at the review gate, untouched: the plan resumes at review and names
//     submit ahead, irreversible and not authorized; resume is refused
//     (409) saying it would only park at the gate again;
//   - the operator reviews: the plan skips review and resumes at submit;
//     the run resumes and parks at the submit gate;
//   - the operator presses Submit transfer: the confirm dialog is open, the
//     plan skips submit, resumes at confirm (irreversible, not authorized,
//     reached), the page disables Resume naming the dialog and the API
//     refuses it naming the dialog; the effects column shows the submit
//     sent by the operator;
//   - the operator answers the dialog: nothing blocks, the page's Resume
//     resumes, and the run succeeds with one ledger entry.
func TestResumePlanTransfer(t *testing.T) {
	srv, _ := openConsole(t, filepath.Join(t.TempDir(), "cua.db"))
	const runID = "run-plan"
	appc, done := startTransfer(t, srv, runID)
	api := signIn(t, srv, "alice")
	waitParkedAt(t, srv, runID, "review")
	p := planOf(t, api, runID)
	if p.ParkedAt != "review" || p.ResumeAt != "review" || len(p.Skip) != 0 {
		t.Fatalf("plan at the untouched review gate = %+v", p)
	}
	if s := aheadStep(t, p, "submit"); s.Risk != domain.RiskIrreversible || s.Authorized || s.Why == "" {
		t.Fatalf("submit ahead = %+v, want irreversible and not authorized, with why", s)
	}
	resumeRefused(t, api, runID, "parks it at the same gate again")

	op := openTab(t, srv, "alice")
	op.watch(runID)
	op.poll("plan shown", `document.getElementById('plan-steps').textContent.includes('resume at review')`)
	op.poll("resume disabled", `document.getElementById('resume').disabled && document.getElementById('blocked').textContent.includes('gate review')`)
	op.claim()
	lv := liveSession(t, srv, runID)
	op.clickNode(lv, "button", "Review transfer")
	waitScreen(t, lv, "heading", "Review Transfer")
	p = planOf(t, api, runID)
	if !slices.Equal(p.Skip, []string{"review"}) || p.ResumeAt != "submit" || len(p.Blocked) != 0 {
		t.Fatalf("plan after the review = %+v, want skip review, resume at submit, nothing blocked", p)
	}
	op.do("release", chromedp.Click(chromedp.ID("release")))
	op.poll("released", `document.getElementById('status').textContent === 'released'`)
	op.resume()
	waitParkedAt(t, srv, runID, "submit")

	submitWithDialogOpen(t, srv, op, api, runID)

	op.claim()
	lv = liveSession(t, srv, runID)
	op.do("answer the dialog", chromedp.WaitVisible(chromedp.ID("dialog-ok")), chromedp.Click(chromedp.ID("dialog-ok")))
	op.idle()
	op.confirm("confirm the OK")
	op.idle()
	waitScreen(t, lv, "heading", "Transfer Complete")
	p = planOf(t, api, runID)
	if !slices.Equal(p.Skip, []string{"submit", "confirm"}) || p.ResumeAt != "read_confirmation" || len(p.Blocked) != 0 || p.Dialog != "" {
		t.Fatalf("plan after the dialog = %+v, want skip submit and confirm, resume at read_confirmation, nothing blocked", p)
	}
	op.do("release", chromedp.Click(chromedp.ID("release")))
	op.poll("released", `document.getElementById('status').textContent === 'released'`)
	op.resume()
	var res runResult
	select {
	case res = <-done:
	case <-time.After(120 * time.Second):
		t.Fatalf("the run did not finish after the resume; status %q", op.status())
	}
	if res.err != nil || res.rec.Status != domain.StatusSuccess {
		t.Fatalf("run = %+v %v", res.rec, res.err)
	}
	if ledger, err := appc.Ledger(t.Context()); err != nil || len(ledger) != 1 {
		t.Fatalf("ledger = %+v %v, want exactly one transfer", ledger, err)
	}
}

// submitWithDialogOpen has op claim the session parked at submit, press
// Submit transfer (confirmed), and checks that with the confirm dialog
// open the plan and the page block Resume naming the dialog, the API
// refuses it, and the effects column names the operator's submit. It
// leaves the session released with the dialog open.
func submitWithDialogOpen(t *testing.T, srv *Server, op *operatorTab, api *client, runID string) {
	t.Helper()
	op.watch(runID)
	op.claim()
	lv := liveSession(t, srv, runID)
	op.clickNode(lv, "button", "Submit transfer")
	op.confirm("confirm the submit")
	op.idle()
	op.poll("dialog shown", `!document.getElementById('dialog').hidden`)
	p := planOf(t, api, runID)
	if p.Dialog == "" || !slices.Equal(p.Skip, []string{"submit"}) || p.ResumeAt != "confirm" {
		t.Fatalf("plan with the dialog open = %+v, want the dialog, skip submit, resume at confirm", p)
	}
	if s := aheadStep(t, p, "confirm"); !s.Reached || s.Authorized || s.Risk != domain.RiskIrreversible {
		t.Fatalf("confirm ahead = %+v, want reached, irreversible, not authorized", s)
	}
	if !strings.Contains(strings.Join(p.Blocked, "\n"), "a dialog is open") {
		t.Fatalf("plan blocked = %q, want the dialog named", p.Blocked)
	}
	op.poll("resume disabled naming the dialog", `document.getElementById('resume').disabled &&
		document.getElementById('blocked').textContent.includes('a dialog is open') &&
		document.getElementById('plan-steps').textContent.includes('confirm (irreversible, NOT authorized')`)
	op.poll("effects by the operator", fmt.Sprintf(`(() => { const r = document.querySelector('#sessions tr[data-session=%q]');
		return !!r && r.cells[4].textContent.includes('"Submit transfer" sent by alice') })()`, runID))
	op.do("release", chromedp.Click(chromedp.ID("release")))
	op.poll("released", `document.getElementById('status').textContent === 'released'`)
	resumeRefused(t, api, runID, "a dialog is open")
	if w := lv.humanEffects(); len(w) == 0 || w[0].Principal != "alice" || w[0].Risk != domain.RiskIrreversible {
		t.Fatalf("human effects = %+v, want alice's irreversible submit", w)
	}
}
