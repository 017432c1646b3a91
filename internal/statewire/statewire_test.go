package statewire

import (
	"encoding/json"
	"testing"
)

// TestWireFormat pins the bytes the contract's servers write and the
// surface reads: field names, order, and which fields are always present.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{name: "empty state", v: State{Controls: []Control{}},
			want: `{"url":"","title":"","controls":[],"app_state":null,"seq":0}`},
		{name: "state", v: State{
			URL: "http://127.0.0.1:1/", Title: "T", HTTPStatus: 502, Dialog: &Dialog{Type: "confirm", Message: "Sure?"},
			Controls: []Control{{ID: "c1.a", Role: "button", Name: "Go", Value: "v", Description: "d", Disabled: true, Focused: true,
				Checked: true, Selected: true, Expanded: true, Password: true, Sensitive: true, Frame: "content", Region: "r", Parent: "c1.p"}},
			AppState: MustAppState(map[string]any{"screen": "home", "n": 2, "ok": true, "html": "<&>"}), Seq: 7},
			want: `{"url":"http://127.0.0.1:1/","title":"T","http_status":502,"dialog":{"type":"confirm","message":"Sure?"},` +
				`"controls":[{"id":"c1.a","role":"button","name":"Go","value":"v","description":"d","disabled":true,"focused":true,` +
				`"checked":true,"selected":true,"expanded":true,"password":true,"sensitive":true,"frame":"content","region":"r","parent":"c1.p"}],` +
				`"app_state":{"html":"\u003c\u0026\u003e","n":2,"ok":true,"screen":"home"},"seq":7}`},
		{name: "act request omits what is empty", v: ActRequest{Action: "reload"}, want: `{"action":"reload"}`},
		{name: "act request", v: ActRequest{Control: "c1.a", Action: "type", Text: "x", Key: "Enter", URL: "u"},
			want: `{"control":"c1.a","action":"type","text":"x","key":"Enter","url":"u"}`},
		{name: "act response keeps navigated, url and seq", v: ActResponse{}, want: `{"navigated":false,"url":"","seq":0}`},
		{name: "act response with error", v: ActResponse{Navigated: true, URL: "u", Seq: 3, Error: "down"},
			want: `{"navigated":true,"url":"u","seq":3,"error":"down"}`},
		{name: "error", v: ErrorResponse{Error: "gone", Code: "stale"}, want: `{"error":"gone","code":"stale"}`},
		{name: "error without code", v: ErrorResponse{Error: "not found"}, want: `{"error":"not found"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestMustAppState(t *testing.T) {
	t.Parallel()
	if got := MustAppState(nil); got != nil {
		t.Errorf("MustAppState(nil) = %q, want nil (null on the wire)", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustAppState did not panic on a value JSON cannot encode")
		}
	}()
	MustAppState(map[string]any{"f": func() {}})
}
