package mockapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// The faults whose effect lives in the page's script, replayed in real
// Chromium with the reference lookup.

const capDir = "../../examples/capabilities"

var (
	chromeOnce sync.Once
	chrome     *browser.Browser
	chromeErr  error
)

// sharedChrome launches one Chromium for this file's tests; it lives until
// the test binary exits.
func sharedChrome(t *testing.T) *browser.Browser {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CUA_BROWSER") == "" {
		t.Skip("no Chromium")
	}
	chromeOnce.Do(func() {
		chrome, chromeErr = browser.Launch(context.Background(), browser.Options{})
	})
	if chromeErr != nil {
		t.Fatalf("launch Chromium: %v", chromeErr)
	}
	return chrome
}

type faultRun struct {
	app  *mockapp.Server
	lib  *replay.DirLibrary
	sess *browser.Session
	dir  string
	ctx  context.Context
}

func setupFaultRun(t *testing.T) *faultRun {
	t.Helper()
	br := sharedChrome(t)
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	lib, err := replay.LoadDir(capDir)
	if err != nil {
		t.Fatal(err)
	}
	// Every lookup of the test runs under this context: the session-drop
	// test takes 13 s here, so a minute was 4.6x from failing on a loaded
	// CI machine. Only a hang meets 5 minutes.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)
	sess, err := br.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return &faultRun{app: app, lib: lib, sess: sess, dir: t.TempDir(), ctx: ctx}
}

type creds struct{}

func (creds) Secret(ref string) (string, error) {
	switch ref {
	case "corebank_operator":
		return mockapp.DefaultOperator, nil
	case "corebank_password":
		return mockapp.DefaultPassword, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

func (f *faultRun) lookup(t *testing.T, c *capability.Loaded, member string) *domain.RunRecord {
	t.Helper()
	return f.run(t, c, map[string]string{"member_id": member}, nil)
}

// run replays c; irreversible, when set, opts in to irreversible steps and
// releases those gates.
func (f *faultRun) run(t *testing.T, c *capability.Loaded, inputs map[string]string, gates []string) *domain.RunRecord {
	t.Helper()
	member := inputs["member_id"]
	var approval *policy.Approval
	if gates != nil {
		approval = &policy.Approval{Capability: c.Capability.ID + "@" + c.Capability.Version, ContentHash: c.Hash, Approver: "reviewer"}
	}
	start := time.Now()
	defer func() { t.Logf("lookup %s took %s", member, time.Since(start).Round(time.Millisecond)) }()
	// The steps around each fault must reach their screens, so the step
	// wait only has to outlast a slow page: 10 s, which a passing step
	// never waits out (the tests take as long as with 3 s).
	rec, err := replay.Run(f.ctx, replay.Options{
		Capability: c, Library: f.lib, Inputs: inputs, AllowIrreversible: gates != nil, ReleasedGates: gates, Approval: approval,
		BaseURL: f.app.URL(), Surface: f.sess, Secrets: creds{}, Redactor: redact.New(), DataDir: f.dir,
		RunID: fmt.Sprintf("fault-%d", time.Now().UnixNano()), StepWait: 10 * time.Second,
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return rec
}

func (f *faultRun) arm(t *testing.T, fault string) {
	t.Helper()
	resp, err := httpPost(f.ctx, f.app.URL()+"/_control/arm", fmt.Sprintf(`{"fault":%q,"count":1}`, fault))
	if err != nil || resp != 200 {
		t.Fatalf("arm %s: %d %v", fault, resp, err)
	}
}

// loadCap loads a reference capability; each edit pair replaces old text
// with new and the copy is sealed again.
func loadCap(t *testing.T, name string, edits ...string) *capability.Loaded {
	t.Helper()
	path := filepath.Join(capDir, name+".yaml")
	if len(edits) > 0 {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for i := 0; i+1 < len(edits); i += 2 {
			if !strings.Contains(text, edits[i]) {
				t.Fatalf("%s: %q not found", name, edits[i])
			}
			text = strings.Replace(text, edits[i], edits[i+1], 1)
		}
		var kept []string
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "content_hash:") {
				kept = append(kept, line)
			}
		}
		path = filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := capability.Seal(path); err != nil {
			t.Fatal(err)
		}
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestStaleResultInChromium: the reference lookup checks that the details
// show the heading "Member {input.member_id}" (invariant 23), so under
// stale_result a lookup of 23456 right after one of 12345 waits for the
// record asked for and answers 23456's balance, never 12345's; the same
// lookup with that check taken out reads the stale record.
func TestStaleResultInChromium(t *testing.T) {
	f := setupFaultRun(t)
	ref := loadCap(t, "memberdesk.savings_balance")
	if !capability.ChecksIdentity(ref.Capability) || len(capability.UnarmedReads(ref.Capability)) > 0 {
		t.Fatalf("%s reads with no identity check: %v", ref.Capability.Ref(), capability.UnarmedReads(ref.Capability))
	}
	if rec := f.lookup(t, ref, "12345"); rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["savings_balance"]) != "1234.56" {
		t.Fatalf("lookup of 12345: %s %s %s %v; want SUCCESS with 1234.56", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	f.arm(t, mockapp.FaultStaleResult)
	rec := f.lookup(t, ref, "23456")
	if got := fmt.Sprint(rec.Outputs["savings_balance"]); got == "1234.56" || rec.Status == domain.StatusSuccess && got != "0.00" {
		t.Fatalf("reference lookup of 23456 under stale_result: %s %s %s %v; want SUCCESS with 23456's balance 0.00 (or a halt), never 12345's 1234.56",
			rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	if rec.Status != domain.StatusSuccess || rec.Outputs["status"] != "Closed" {
		t.Errorf("reference lookup of 23456 under stale_result: %s %s %s %v; want SUCCESS with 0.00 and Closed", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}

	// The same lookup without the identity check: it reads the stale
	// record (the previous lookup's member, 23456) as 12345's answer.
	check := `- node_exists: {role: heading, name: "Member {input.member_id}", scope: {frame: content}}` + "\n"
	unarmed := loadCap(t, "memberdesk.savings_balance", "        "+check, "", "      "+check, "")
	if reads := capability.UnarmedReads(unarmed.Capability); len(reads) != 3 {
		t.Fatalf("unarmed variant: unarmed reads %v, want the three reads", reads)
	}
	f.arm(t, mockapp.FaultStaleResult)
	rec = f.lookup(t, unarmed, "12345")
	if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["savings_balance"]) != "0.00" {
		t.Fatalf("without an identity check: %s %s %v; want SUCCESS with member 23456's balance 0.00 (the stale record)", rec.Status, rec.FailureCode, rec.Outputs)
	}
}

// TestFocusStealInChromium: the popup opens on the first input into the
// member number field and takes the focus, so the typed number does not
// land and no search is posted; the popup is on screen afterwards.
func TestFocusStealInChromium(t *testing.T) {
	f := setupFaultRun(t)
	plain := loadCap(t, "memberdesk.savings_balance")
	f.arm(t, mockapp.FaultFocusSteal)
	rec := f.lookup(t, plain, "12345")
	if rec.Status == domain.StatusSuccess {
		t.Fatalf("lookup under focus_steal succeeded: %v", rec.Outputs)
	}
	snap, err := f.sess.Observe(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var popup, field *domain.Node
	for i, n := range snap.Nodes {
		switch {
		case n.Role == "dialog" && n.Name == "Chat with us":
			popup = &snap.Nodes[i]
		case n.Role == "textbox" && n.Name == "Member number":
			field = &snap.Nodes[i]
		}
	}
	if popup == nil {
		t.Fatalf("no \"Chat with us\" dialog on screen after %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	}
	if field == nil || field.Value != "1" {
		t.Errorf("member number field = %+v, want only the first typed character", field)
	}
	state, err := getState(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	if state.Posts["/content/search"] != 0 {
		t.Errorf("posts = %v, want no search posted", state.Posts)
	}
	t.Logf("lookup under focus_steal: %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
}

func httpPost(ctx context.Context, url, body string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func getState(ctx context.Context, base string) (mockapp.State, error) {
	var st mockapp.State
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_control/state", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// TestSessionDropAfterSignonInChromium: the lookup's sign-on lands (one
// POST, the session created), and the next page finds the session gone.
// An engine that recovers (session_expired signs on again) succeeds with
// two sign-on POSTs; one that does not halts on the sign-on form with the
// session dropped. Either way the fault is used once and nothing wrong is
// read.
func TestSessionDropAfterSignonInChromium(t *testing.T) {
	f := setupFaultRun(t)
	f.arm(t, mockapp.FaultSessionDropAfterSignon)
	rec := f.lookup(t, loadCap(t, "memberdesk.savings_balance"), "12345")
	t.Logf("lookup under session_drop_after_signon: %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	st, err := getState(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	if st.Faults[mockapp.FaultSessionDropAfterSignon] != 0 {
		t.Errorf("faults = %v, want session_drop_after_signon used", st.Faults)
	}
	if rec.Status == domain.StatusSuccess {
		if fmt.Sprint(rec.Outputs["savings_balance"]) != "1234.56" || st.Posts["/content/signon"] != 2 || st.Sessions != 1 {
			t.Errorf("recovered lookup: outputs %v, posts %v, sessions %d; want 1234.56, two sign-ons, one session", rec.Outputs, st.Posts, st.Sessions)
		}
		return
	}
	if len(rec.Outputs) != 0 || st.Posts["/content/signon"] != 1 || st.Sessions != 0 {
		t.Errorf("halted lookup: outputs %v, posts %v, sessions %d; want none, one sign-on, the session dropped", rec.Outputs, st.Posts, st.Sessions)
	}
	snap, err := f.sess.Observe(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	signOn := false
	for _, n := range snap.Nodes {
		signOn = signOn || (n.Role == "button" && n.Name == "Sign on")
	}
	if !signOn {
		t.Error("the halted lookup is not on the sign-on form")
	}
}

// TestDialogAfterSubmitInChromium: the transfer posts once, and the
// Transfer Complete page is under a "Survey" dialog the capability does
// not declare.
func TestDialogAfterSubmitInChromium(t *testing.T) {
	f := setupFaultRun(t)
	f.arm(t, mockapp.FaultDialogAfterSubmit)
	rec := f.run(t, screenOnlyTransfer(t),
		map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
		[]string{"submit"})
	t.Logf("transfer under dialog_after_submit: %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	st, err := getState(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	if st.Posts["/content/transfer/submit"] != 1 {
		t.Errorf("posts = %v, want one submit", st.Posts)
	}
	snap, err := f.sess.Observe(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var survey, done bool
	for _, n := range snap.Nodes {
		survey = survey || (n.Role == "dialog" && n.Name == "Survey")
		done = done || (n.Role == "heading" && n.Name == "Transfer Complete")
	}
	if !survey || !done {
		t.Errorf("on screen: Survey dialog %v, Transfer Complete %v; want both", survey, done)
	}
}
