// Package statewire owns the JSON wire types of the state automation
// contract: GET {base}/_automation/state (a [State] of [Control]s, long
// polled with ?after=SEQ&wait_ms=MS), POST {base}/_automation/act (an
// [ActRequest] answered by an [ActResponse], or an [ErrorResponse] for a
// refused act). The surface adapter internal/surface/state reads them; the
// applications that serve the contract (internal/mockapp's MemberDesk,
// internal/surface/state/statetest's fixture) write them. One definition
// keeps the three in step.
//
// It holds types, paths and one encoding helper only: it must never do
// I/O, hold behaviour of a client or a server, or import anything but the
// standard library (internal/mockapp, which is stdlib only, imports it).
package statewire

import "encoding/json"

// Paths of the automation contract, relative to the application's base URL.
const (
	StatePath = "/_automation/state"
	ActPath   = "/_automation/act"
)

// MustAppState encodes an application's own state for [State.AppState];
// nil encodes as null. Like regexp.MustCompile it panics on a programming
// error: a value encoding/json cannot encode (a channel, a function), which
// an application's state of strings, numbers and booleans never holds.
func MustAppState(v map[string]any) json.RawMessage {
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic("statewire: app_state: " + err.Error())
	}
	return raw
}

// State is the body of GET {base}/_automation/state.
type State struct {
	// URL and Title describe the application's current screen.
	URL   string `json:"url"`
	Title string `json:"title"`
	// HTTPStatus is the status the current screen was served with, when the
	// application knows one (0 when it does not): a 502 page, a 404 page.
	HTTPStatus int `json:"http_status,omitempty"`
	// Dialog is an open modal dialog of the JavaScript kind ("alert",
	// "confirm", "prompt"); its message and buttons are also controls.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Controls are the screen's elements in document order: everything a
	// user can act on or read (buttons, links, fields, headings, cells,
	// status messages), not only controls in the strict sense.
	Controls []Control `json:"controls"`
	// AppState is the application's own state, a JSON object (null when
	// the application has none). A surface keeps it in memory as a
	// progress signal only (DESIGN invariant 11).
	AppState json.RawMessage `json:"app_state"`
	// Seq changes (increases) whenever the screen or the app state changes.
	Seq uint64 `json:"seq"`
}

// Dialog is an open JavaScript-style dialog.
type Dialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Control is one element of the screen.
type Control struct {
	// ID is unique on the screen and names the control in an act request.
	// An application should not reuse an id for a different element after
	// the screen is replaced, so that a stale reference is refused.
	ID   string `json:"id"`
	Role string `json:"role"`
	Name string `json:"name"`
	// Value is the current value of a field (the selected option's label
	// for a select). A password field should never report the password.
	Value       string `json:"value,omitempty"`
	Description string `json:"description,omitempty"`
	Disabled    bool   `json:"disabled,omitempty"`
	Focused     bool   `json:"focused,omitempty"`
	Checked     bool   `json:"checked,omitempty"`
	Selected    bool   `json:"selected,omitempty"`
	Expanded    bool   `json:"expanded,omitempty"`
	Password    bool   `json:"password,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	// Frame is the frame path the control is in ("" for the top document,
	// "content", "outer/inner").
	Frame string `json:"frame,omitempty"`
	// Region is the name of the section the control belongs to (for a table
	// value, the label of its row).
	Region string `json:"region,omitempty"`
	// Parent is the id of an earlier control that contains this one (an
	// option's select, a dialog's buttons, a row's cells).
	Parent string `json:"parent,omitempty"`
}

// ActRequest is the body of POST {base}/_automation/act.
type ActRequest struct {
	// Control is the id of the target; empty for navigate, reload and a key
	// press on the focused control.
	Control string `json:"control,omitempty"`
	// Action is click, type, select, press_key, navigate or reload.
	Action string `json:"action"`
	// Text is what type enters (replacing the field's value) or the label
	// select picks.
	Text string `json:"text,omitempty"`
	// Key is the key press_key presses ("Enter").
	Key string `json:"key,omitempty"`
	// URL is where navigate goes.
	URL string `json:"url,omitempty"`
}

// ActResponse is the body of a 200 answer to an act request (and, with
// Error set, of a 502, 503 or 504 answer): whether the act loaded a page,
// the screen's URL and seq after it.
type ActResponse struct {
	Navigated bool   `json:"navigated"`
	URL       string `json:"url"`
	Seq       uint64 `json:"seq"`
	Error     string `json:"error,omitempty"`
}

// ErrorResponse is the body of a 4xx answer.
type ErrorResponse struct {
	Error string `json:"error"`
	// Code is one of "stale", "disabled", "invalid", "dialog_open",
	// "unsupported" (informative: the status decides).
	Code string `json:"code,omitempty"`
}
