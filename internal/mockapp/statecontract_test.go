package mockapp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/statewire"
)

// autoState is a decoded state answer: the wire state, with app_state
// decoded into a map (the outer field wins the "app_state" key).
type autoState struct {
	statewire.State
	AppState map[string]any `json:"app_state"`
}

// autoGet reads the automation state (query is "" or "?after=…").
func (b *testBundle) autoGet(tb testing.TB, query string) autoState {
	tb.Helper()
	var st autoState
	if status, raw := b.autoDo(tb, http.MethodGet, automationStatePath+query, nil); status != http.StatusOK {
		tb.Fatalf("GET state%s: %d %s", query, status, raw)
	} else if err := json.Unmarshal(raw, &st); err != nil {
		tb.Fatalf("decode state: %v", err)
	}
	return st
}

// autoAct posts one act and returns the status and the raw answer.
func (b *testBundle) autoAct(tb testing.TB, req statewire.ActRequest) (int, []byte) {
	tb.Helper()
	if req.Action == "type" {
		b.mu.Lock()
		if req.Text != "" && strings.Contains(strings.ToLower(req.Control), "password") {
			b.secrets = append(b.secrets, req.Text)
		}
		b.mu.Unlock()
	}
	return b.autoDo(tb, http.MethodPost, automationActPath, req)
}

// mustAct posts one act that must answer 200.
func (b *testBundle) mustAct(tb testing.TB, req statewire.ActRequest) statewire.ActResponse {
	tb.Helper()
	status, raw := b.autoAct(tb, req)
	if status != http.StatusOK {
		tb.Fatalf("act %+v: %d %s", req, status, raw)
	}
	var ans statewire.ActResponse
	if err := json.Unmarshal(raw, &ans); err != nil {
		tb.Fatalf("decode answer: %v", err)
	}
	return ans
}

func (b *testBundle) autoDo(tb testing.TB, method, path string, body any) (int, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	for _, secret := range b.secretList() {
		if bytes.Contains(raw, []byte(secret)) {
			tb.Errorf("%s %s: the answer holds a password", method, path)
		}
	}
	return resp.StatusCode, raw
}

// ctl returns the control of role and name in frame, or fails.
func ctl(tb testing.TB, st autoState, frame, role, name string) statewire.Control {
	tb.Helper()
	for _, c := range st.Controls {
		if c.Frame == frame && c.Role == role && c.Name == name {
			return c
		}
	}
	tb.Fatalf("no %s %q in frame %q; controls: %+v", role, name, frame, st.Controls)
	return statewire.Control{}
}

func hasCtl(st autoState, role, name string) bool {
	for _, c := range st.Controls {
		if c.Role == role && c.Name == name {
			return true
		}
	}
	return false
}

// autoSignOn signs the automation session on and returns the home state.
func (b *testBundle) autoSignOn(tb testing.TB) autoState {
	tb.Helper()
	st := b.autoGet(tb, "")
	b.mustAct(tb, statewire.ActRequest{Control: ctl(tb, st, "content", "textbox", "Operator ID").ID, Action: "type", Text: b.srv.opts.Operator})
	b.mustAct(tb, statewire.ActRequest{Control: ctl(tb, st, "content", "textbox", "Password").ID, Action: "type", Text: b.srv.opts.Password})
	b.mustAct(tb, statewire.ActRequest{Control: ctl(tb, st, "content", "button", "Sign on").ID, Action: "click"})
	st = b.autoGet(tb, "")
	if st.AppState["screen"] != screenHome || !hasCtl(st, "heading", "Welcome") {
		tb.Fatalf("after sign on: %+v", st)
	}
	return st
}

// autoSearch opens member search and searches number.
func (b *testBundle) autoSearch(tb testing.TB, number string) autoState {
	tb.Helper()
	st := b.autoGet(tb, "")
	if ans := b.mustAct(tb, statewire.ActRequest{Control: ctl(tb, st, "nav", "link", "Member Search").ID, Action: "click"}); !ans.Navigated {
		tb.Error("the Member Search link did not navigate")
	}
	st = b.autoGet(tb, "")
	b.mustAct(tb, statewire.ActRequest{Control: ctl(tb, st, "content", "textbox", "Member number").ID, Action: "type", Text: number})
	b.mustAct(tb, statewire.ActRequest{Action: "press_key", Key: "Enter"}) // the focused field
	return b.autoGet(tb, "")
}

func TestAutomationFlow(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	st := b.autoGet(t, "")
	if st.Title != "MemberDesk" || st.URL != b.base+"/" || st.Seq == 0 {
		t.Errorf("state header: %q %q seq %d", st.Title, st.URL, st.Seq)
	}
	if st.AppState["screen"] != screenSignon || st.AppState["signed_on"] != false {
		t.Errorf("app_state at start: %v", st.AppState)
	}
	pw := ctl(t, st, "content", "textbox", "Password")
	if !pw.Password {
		t.Error("Password is not marked password")
	}
	b.mustAct(t, statewire.ActRequest{Control: pw.ID, Action: "type", Text: "abc"})
	if got := ctl(t, b.autoGet(t, ""), "content", "textbox", "Password").Value; got != "•••" {
		t.Errorf("password value = %q, want bullets", got)
	}
	b.autoSignOn(t)
	st = b.autoSearch(t, "12345")
	if st.AppState["screen"] != screenMember || st.AppState["member"] != "12345" || st.HTTPStatus != 200 {
		t.Fatalf("after search: app_state %v status %d", st.AppState, st.HTTPStatus)
	}
	want := map[string]string{"Member number": "12345", "Name": "Jane Doe", "Status": "Active", "Savings Balance": "$1,234.56", "As of": "11/30/2026"}
	got := map[string]string{}
	for _, c := range st.Controls {
		if c.Role == "cell" && c.Region != c.Name {
			got[c.Region] = c.Name
			if c.Parent == "" {
				t.Errorf("value cell %q has no row", c.Name)
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cell in region %q = %q, want %q", k, got[k], v)
		}
	}
	counts := b.state(t).Requests
	for _, k := range []string{"POST /content/signon", "GET /content/home", "GET /content/search", "POST /content/search", "GET /content/member/{id}"} {
		if counts[k] != 1 {
			t.Errorf("requests[%q] = %d, want 1 (%v)", k, counts[k], counts)
		}
	}
	if b.state(t).Sessions != 0 {
		t.Error("the automation session made a browser session")
	}
	// Sign off through nav.
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "nav", "link", "Sign Off").ID, Action: "click"})
	if st = b.autoGet(t, ""); st.AppState["screen"] != screenSignon || st.AppState["signed_on"] != false {
		t.Errorf("after sign off: %v", st.AppState)
	}
}

func TestAutomationOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		member string
		screen string
		status int
		role   string
		text   string
	}{
		{"23456", screenMember, 200, "cell", "Closed"},
		{"34567", screenMember, 200, "status", "No savings account on file"},
		{"45678", screenRestricted, 200, "status", "This record is restricted. Refer to a supervisor."},
		{"99999", screenSearch, 200, "status", "Member not found"},
		{"12a", screenSearch, 400, "alert", "Member number must be 5 digits"},
	}
	for _, tt := range tests {
		t.Run(tt.member, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Options{})
			b.autoSignOn(t)
			st := b.autoSearch(t, tt.member)
			if st.AppState["screen"] != tt.screen || st.HTTPStatus != tt.status || st.AppState["http_status"] != float64(tt.status) {
				t.Errorf("screen %v status %d (%v), want %s %d", st.AppState["screen"], st.HTTPStatus, st.AppState["http_status"], tt.screen, tt.status)
			}
			ctl(t, st, "content", tt.role, tt.text)
			if tt.screen == screenSearch && ctl(t, st, "content", "textbox", "Member number").Value != tt.member {
				t.Error("the search form lost the member number")
			}
			if tt.member == "34567" && hasCtl(st, "cell", "Savings Balance") {
				t.Error("member 34567 shows a savings row")
			}
		})
	}
}

func TestAutomationWrongPassword(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	st := b.autoGet(t, "")
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "textbox", "Operator ID").ID, Action: "type", Text: "OP1001"})
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "textbox", "Password").ID, Action: "type", Text: "wrong-pass-9"})
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "textbox", "Password").ID, Action: "press_key", Key: "Enter"})
	st = b.autoGet(t, "")
	ctl(t, st, "content", "alert", "Invalid operator ID or password")
	if st.AppState["signed_on"] != false || ctl(t, st, "content", "textbox", "Operator ID").Value != "" {
		t.Errorf("after a refused sign on: %v", st.AppState)
	}
	if strings.Contains(b.logs.String(), "wrong-pass-9") {
		t.Error("the log holds the password")
	}
}

func TestAutomationRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	st := b.autoGet(t, "")
	signOn := ctl(t, st, "content", "button", "Sign on").ID
	heading := ctl(t, st, "content", "heading", "Sign On").ID
	tests := []struct {
		name   string
		req    any
		status int
		code   string
	}{
		{"unknown control", statewire.ActRequest{Control: "c99.ghost", Action: "click"}, 404, "stale"},
		{"type into a button", statewire.ActRequest{Control: signOn, Action: "type", Text: "x"}, 422, "invalid"},
		{"type into a heading", statewire.ActRequest{Control: heading, Action: "type", Text: "x"}, 422, "invalid"},
		{"select", statewire.ActRequest{Control: signOn, Action: "select", Text: "x"}, 422, "invalid"},
		{"unknown action", statewire.ActRequest{Control: signOn, Action: "hover"}, 501, "unsupported"},
		{"click without control", statewire.ActRequest{Action: "click"}, 400, "invalid"},
		{"navigate without url", statewire.ActRequest{Action: "navigate"}, 400, "invalid"},
		{"unknown field", map[string]string{"action": "reload", "ctrl": "x"}, 400, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, raw := b.autoDo(t, http.MethodPost, automationActPath, tt.req)
			var e statewire.ErrorResponse
			_ = json.Unmarshal(raw, &e)
			if status != tt.status || e.Code != tt.code || e.Error == "" {
				t.Errorf("%d %s, want %d %s", status, raw, tt.status, tt.code)
			}
		})
	}
	if after := b.autoGet(t, ""); after.Seq != st.Seq {
		t.Errorf("refused acts changed seq %d -> %d", st.Seq, after.Seq)
	}
	// A key press with nothing focused does nothing, successfully.
	b.mustAct(t, statewire.ActRequest{Action: "press_key", Key: "Enter"})
	if resp, err := b.client.Get(b.base + automationActPath); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET act: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if status, _ := b.autoDo(t, http.MethodGet, automationStatePath+"?after=x&wait_ms=1", nil); status != http.StatusBadRequest {
		t.Errorf("bad long poll: %d", status)
	}
}

func TestAutomationStaleAfterNavigation(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	st := b.autoSignOn(t)
	old := ctl(t, st, "nav", "link", "Member Search").ID
	ans := b.mustAct(t, statewire.ActRequest{Action: "reload"})
	if !ans.Navigated || ans.URL != b.base+"/" {
		t.Errorf("reload answer %+v", ans)
	}
	if status, _ := b.autoAct(t, statewire.ActRequest{Control: old, Action: "click"}); status != http.StatusNotFound {
		t.Errorf("an id of the replaced nav frame: %d, want 404", status)
	}
	// navigate deep-links the content frame.
	b.mustAct(t, statewire.ActRequest{Action: "navigate", URL: b.base + "/content/member/45678"})
	if st = b.autoGet(t, ""); st.AppState["screen"] != screenRestricted || st.AppState["path"] != "/content/member/45678" {
		t.Errorf("deep link: %v", st.AppState)
	}
	b.mustAct(t, statewire.ActRequest{Action: "navigate", URL: b.base + "/content/transfer"})
	if st = b.autoGet(t, ""); st.AppState["screen"] != screenMissing || st.HTTPStatus != 404 {
		t.Errorf("a page the mode does not serve: %v", st.AppState)
	}
}

func TestAutomationFaults(t *testing.T) {
	t.Parallel()
	t.Run(FaultTransientLoad, func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.autoSignOn(t)
		b.arm(t, FaultTransientLoad, 1)
		st := b.autoGet(t, "")
		status, raw := b.autoAct(t, statewire.ActRequest{Control: ctl(t, st, "nav", "link", "Member Search").ID, Action: "click"})
		var ans statewire.ActResponse
		_ = json.Unmarshal(raw, &ans)
		if status != http.StatusBadGateway || ans.Error == "" || !ans.Navigated || ans.Seq == 0 {
			t.Fatalf("act under transient_load: %d %s", status, raw)
		}
		st = b.autoGet(t, "")
		if st.HTTPStatus != 502 || st.AppState["http_status"] != float64(502) || st.AppState["screen"] != screenBadGateway {
			t.Fatalf("state after a 502: %d %v", st.HTTPStatus, st.AppState)
		}
		ctl(t, st, "content", "heading", "Bad Gateway")
		b.mustAct(t, statewire.ActRequest{Action: "reload"})
		if st = b.autoGet(t, ""); st.AppState["screen"] != screenSearch || st.HTTPStatus != 200 {
			t.Errorf("reload after a 502: %v", st.AppState)
		}
	})
	t.Run(FaultSessionTimeout, func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.autoSignOn(t)
		b.arm(t, FaultSessionTimeout, 1)
		st := b.autoGet(t, "")
		b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "nav", "link", "Member Search").ID, Action: "click"})
		st = b.autoGet(t, "")
		if st.AppState["screen"] != screenSignon || st.AppState["signed_on"] != false {
			t.Errorf("after session_timeout: %v", st.AppState)
		}
		ctl(t, st, "content", "button", "Sign on")
	})
	t.Run(FaultUndeclaredDialog, func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.autoSignOn(t)
		b.arm(t, FaultUndeclaredDialog, 1)
		st := b.autoSearch(t, "12345") // the search page raises the notice; the post is swallowed
		if st.AppState["screen"] != screenSearch || st.AppState["notice"] != true {
			t.Fatalf("with the notice pending: %v", st.AppState)
		}
		ctl(t, st, "content", "dialog", "Notice")
		ctl(t, st, "content", "text", noticeText)
		cont := ctl(t, st, "content", "button", "Continue")
		b.mustAct(t, statewire.ActRequest{Control: cont.ID, Action: "click"})
		st = b.autoGet(t, "")
		if st.AppState["notice"] != false || hasCtl(st, "dialog", "Notice") || st.AppState["screen"] != screenSearch {
			t.Errorf("after Continue: %v", st.AppState)
		}
		if got := b.state(t).NoticeAcknowledged; got != 1 {
			t.Errorf("notice acknowledged %d times", got)
		}
	})
	t.Run(FaultValidationError, func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.autoSignOn(t)
		b.arm(t, FaultValidationError, 1)
		st := b.autoSearch(t, "12345")
		if st.HTTPStatus != 422 || st.AppState["screen"] != screenSearch {
			t.Errorf("after validation_error: %d %v", st.HTTPStatus, st.AppState)
		}
		ctl(t, st, "content", "alert", validationErrorText)
	})
	t.Run(FaultSlow, func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.arm(t, FaultSlow, 1)
		st := b.autoGet(t, "")
		start := time.Now()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.mustAct(t, statewire.ActRequest{Action: "navigate", URL: b.base + "/"})
		}()
		// The state stays readable while the page load is slow.
		time.Sleep(200 * time.Millisecond)
		if mid := b.autoGet(t, ""); mid.Seq != st.Seq {
			t.Errorf("state changed while the load was slow")
		}
		wg.Wait()
		if d := time.Since(start); d < slowDelay {
			t.Errorf("slow act took %s", d)
		}
	})
}

func TestAutomationResetAndLongPoll(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	st := b.autoSignOn(t)

	// A long poll with no change waits out wait_ms.
	start := time.Now()
	same := b.autoGet(t, "?after="+strconv.FormatUint(st.Seq, 10)+"&wait_ms=300")
	if same.Seq != st.Seq || time.Since(start) < 250*time.Millisecond {
		t.Errorf("quiet long poll: seq %d after %s", same.Seq, time.Since(start))
	}
	// A change ends it early.
	done := make(chan autoState, 1)
	go func() { done <- b.autoGet(t, "?after="+strconv.FormatUint(st.Seq, 10)+"&wait_ms=30000") }()
	time.Sleep(100 * time.Millisecond)
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "nav", "searchbox", "Search this site").ID, Action: "type", Text: "rates"})
	select {
	case got := <-done:
		if got.Seq == st.Seq || ctl(t, got, "nav", "searchbox", "Search this site").Value != "rates" {
			t.Errorf("long poll answered seq %d", got.Seq)
		}
	// A long poll that missed the change would end at wait_ms (30 s);
	// 20 s tells the two apart with room for a loaded CI machine.
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not end on a change")
	}
	// The decoy site search stays in nav.
	b.mustAct(t, statewire.ActRequest{Action: "press_key", Key: "Enter"})
	st = b.autoGet(t, "")
	ctl(t, st, "nav", "text", "No site pages match rates.")
	if st.AppState["screen"] != screenHome {
		t.Errorf("the site search changed the content frame: %v", st.AppState)
	}

	// A reset starts a new session; a waiting long poll sees it.
	go func() { done <- b.autoGet(t, "?after="+strconv.FormatUint(st.Seq, 10)+"&wait_ms=30000") }()
	time.Sleep(100 * time.Millisecond)
	if status := b.control(t, http.MethodPost, "/_control/reset", "", nil); status != http.StatusOK {
		t.Fatalf("reset: %d", status)
	}
	select {
	case got := <-done:
		if got.Seq <= st.Seq || got.AppState["signed_on"] != false || got.AppState["screen"] != screenSignon {
			t.Errorf("after reset: seq %d app_state %v", got.Seq, got.AppState)
		}
	case <-time.After(20 * time.Second): // as above: wait_ms is 30 s
		t.Fatal("the long poll did not see the reset")
	}
}

func TestAutomationVariantNames(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Variant: VariantC})
	b.autoSignOn(t)
	st := b.autoGet(t, "")
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "nav", "link", "Member Search").ID, Action: "click"})
	st = b.autoGet(t, "")
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "textbox", "Member number").ID, Action: "type", Text: "12345"})
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "button", "Find member").ID, Action: "click"})
	st = b.autoGet(t, "")
	ctl(t, st, "content", "cell", "Savings Bal.")
	if hasCtl(st, "cell", "Savings Balance") || st.AppState["variant"] != VariantC {
		t.Errorf("variant c: %v", st.AppState)
	}
}

func TestAutomationSessionStartsOver(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.autoSignOn(t)
	status, body := b.autoDo(t, http.MethodPost, automationSessionPath, nil)
	if status != http.StatusOK {
		t.Fatalf("POST %s = %d %s", automationSessionPath, status, body)
	}
	st := b.autoGet(t, "")
	if st.AppState["screen"] != screenSignon || st.AppState["signed_on"] != false || !hasCtl(st, "button", "Sign on") {
		t.Errorf("after a new session: %v", st.AppState)
	}
}
