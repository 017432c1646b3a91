package mockapp

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestControlErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	tests := []struct {
		name      string
		method    string
		path      string
		body      string
		wantCode  int
		wantField string
	}{
		{name: "arm empty body", method: "POST", path: "/_control/arm", body: "", wantCode: 400, wantField: "body"},
		{name: "arm bad JSON", method: "POST", path: "/_control/arm", body: "{nope", wantCode: 400, wantField: "body"},
		{name: "arm two objects", method: "POST", path: "/_control/arm", body: `{"fault":"slow","count":1}{}`, wantCode: 400, wantField: "body"},
		{name: "arm unknown key", method: "POST", path: "/_control/arm", body: `{"fault":"slow","count":1,"x":1}`, wantCode: 400, wantField: "body"},
		{name: "arm no fault", method: "POST", path: "/_control/arm", body: `{"count":1}`, wantCode: 400, wantField: "fault"},
		{name: "arm unknown fault", method: "POST", path: "/_control/arm", body: `{"fault":"meteor","count":1}`, wantCode: 400, wantField: "fault"},
		{name: "arm fault not a string", method: "POST", path: "/_control/arm", body: `{"fault":7,"count":1}`, wantCode: 400, wantField: "fault"},
		{name: "arm no count", method: "POST", path: "/_control/arm", body: `{"fault":"slow"}`, wantCode: 400, wantField: "count"},
		{name: "arm count below -1", method: "POST", path: "/_control/arm", body: `{"fault":"slow","count":-2}`, wantCode: 400, wantField: "count"},
		{name: "arm count not a number", method: "POST", path: "/_control/arm", body: `{"fault":"slow","count":"x"}`, wantCode: 400, wantField: "count"},
		{name: "arm count fractional", method: "POST", path: "/_control/arm", body: `{"fault":"slow","count":1.5}`, wantCode: 400, wantField: "count"},
		{name: "variant unknown", method: "POST", path: "/_control/variant", body: `{"variant":"d"}`, wantCode: 400, wantField: "variant"},
		{name: "variant missing", method: "POST", path: "/_control/variant", body: `{}`, wantCode: 400, wantField: "variant"},
		{name: "variant bad JSON", method: "POST", path: "/_control/variant", body: `b`, wantCode: 400, wantField: "body"},
		{name: "get arm", method: "GET", path: "/_control/arm", wantCode: 405},
		{name: "post state", method: "POST", path: "/_control/state", wantCode: 405},
		{name: "get reset", method: "GET", path: "/_control/reset", wantCode: 405},
		{name: "unknown control route", method: "GET", path: "/_control/nope", wantCode: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out controlError
			if code := b.control(t, tt.method, tt.path, tt.body, &out); code != tt.wantCode {
				t.Fatalf("= %d, want %d (%+v)", code, tt.wantCode, out)
			}
			if out.Field != tt.wantField || out.Error == "" {
				t.Errorf("error = %+v, want field %q and a message", out, tt.wantField)
			}
			if tt.wantField != "" && tt.wantField != "body" && !strings.Contains(out.Error, tt.wantField) {
				t.Errorf("message %q does not name %q", out.Error, tt.wantField)
			}
		})
	}
	if st := b.state(t); st.Variant != VariantA {
		t.Errorf("refused requests changed the variant to %q", st.Variant)
	}
}

func TestControlIgnoresFaultsAndSessions(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	for _, f := range faultNames {
		b.arm(t, f, -1)
	}
	st := b.state(t)
	for _, f := range faultNames {
		if st.Faults[f] != -1 {
			t.Errorf("%s = %d, want -1", f, st.Faults[f])
		}
	}
	if len(st.Requests) != 0 {
		t.Errorf("control requests were counted: %v", st.Requests)
	}
	if n := len(b.ledger(t)); n != 0 {
		t.Errorf("ledger = %d entries", n)
	}
}

func TestVariantSwitchAtRuntime(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	for _, v := range []string{VariantB, VariantC, VariantA} {
		var st State
		if code := b.control(t, "POST", "/_control/variant", `{"variant":"`+v+`"}`, &st); code != 200 || st.Variant != v {
			t.Fatalf("switch to %s = %d %+v", v, code, st)
		}
		search := b.get(t, searchPath).body
		wantButton := map[string]string{VariantA: "Search", VariantB: "Search", VariantC: "Find member"}[v]
		if !hasButton(search, wantButton) {
			t.Errorf("variant %s: no %q button", v, wantButton)
		}
		if isAlt := strings.Contains(search, `id="member-number"`); isAlt == (v != VariantA) {
			t.Errorf("variant %s: markup not switched", v)
		}
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Variant: VariantB})
	b.signOn(t)
	token := b.review(t, b.client, "12345", "Savings", "Checking", "3")
	if r := b.post(t, submitPath, url.Values{"token": {token}}); !strings.Contains(r.body, "TRF-0001") {
		t.Fatalf("transfer: %q", r.body)
	}
	pending := b.review(t, b.client, "12345", "Savings", "Checking", "4")
	b.post(t, subaccountPath, url.Values{"member": {"12345"}, "account_type": {"Savings"}, "deposit": {"1"}})
	b.control(t, "POST", "/_control/variant", `{"variant":"c"}`, nil)
	b.arm(t, FaultUndeclaredDialog, 1)
	b.get(t, homePath) // fires the notice
	b.post(t, noticeAckPath, url.Values{})
	b.arm(t, FaultSlow, 5)

	var st State
	if code := b.control(t, "POST", "/_control/reset", "", &st); code != 200 {
		t.Fatalf("reset = %d", code)
	}
	if st.Variant != VariantB || st.Sessions != 0 || st.NoticeAcknowledged != 0 || st.NoticePending || len(st.Requests) != 0 || st.Faults[FaultSlow] != 0 {
		t.Errorf("state after reset = %+v", st)
	}
	if n := len(b.ledger(t)); n != 0 {
		t.Errorf("ledger after reset has %d entries", n)
	}
	if r := b.get(t, homePath); r.status != http.StatusSeeOther {
		t.Errorf("old session after reset = %d, want 303", r.status)
	}
	b.signOn(t)
	if r := b.post(t, submitPath, url.Values{"token": {pending}}); r.status != http.StatusConflict {
		t.Errorf("token from before the reset = %d, want 409", r.status)
	}
	token = b.review(t, b.client, "12345", "Savings", "Checking", "3")
	if token == pending {
		t.Errorf("token %q reissued after reset", token)
	}
	if r := b.post(t, submitPath, url.Values{"token": {token}}); !strings.Contains(r.body, "Confirmation TRF-0001") {
		t.Errorf("counters not reset: %q", r.body)
	}
	if r := b.post(t, subaccountPath, url.Values{"member": {"12345"}, "account_type": {"Savings"}, "deposit": {"1"}}); !strings.Contains(r.body, "Confirmation SUB-0001") {
		t.Errorf("sub-account counter not reset: %q", r.body)
	}
}
