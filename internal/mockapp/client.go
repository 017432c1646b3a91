package mockapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Routes of the control API, as a [Client] names them in its errors.
const (
	RouteArm     = controlPrefix + "arm"
	RouteVariant = controlPrefix + "variant"
	RouteReset   = controlPrefix + "reset"
	RouteState   = controlPrefix + "state"
	RouteLedger  = controlPrefix + "ledger"
	RouteDrift   = controlPrefix + "drift"
)

// DefaultClientTimeout bounds one control request of a [Client] whose
// HTTP client was not given.
const DefaultClientTimeout = 10 * time.Second

// Client speaks to a MemberDesk server's control API over HTTP: the demo,
// the end-to-end tests and the benchmarks use it to reset the app, arm
// faults, switch variants and drift, and read the ledger and counters.
//
// Every method takes the context first, bounds the request by it and by the
// HTTP client's timeout, and returns a [*ControlError] when the app answers
// with a status other than 200. A Client is safe for concurrent use.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client of the app at base (its URL, such as
// [Server.URL]). A nil hc uses an http.Client with [DefaultClientTimeout].
func NewClient(base string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: DefaultClientTimeout}
	}
	return &Client{base: strings.TrimSuffix(base, "/"), http: hc}
}

// ControlError is a control request the app refused, or answered with an
// unexpected status: Method and Route name the request, Status is the HTTP
// status, Message and Field the app's JSON error when it sent one.
type ControlError struct {
	Method  string
	Route   string
	Status  int
	Message string
	Field   string
}

func (e *ControlError) Error() string {
	msg := fmt.Sprintf("%s %s: %d %s", e.Method, e.Route, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Reset clears faults, sessions, the ledger, tokens, counters and the
// notice, and puts the variant back to the server's Options.Variant.
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, RouteReset, nil, nil)
}

// Arm arms fault to let after eligible requests through, then fire count
// times (-1 forever, 0 disarms). The app refuses an unknown fault, a count
// below -1 or a negative after (a [*ControlError] with Field set).
func (c *Client) Arm(ctx context.Context, fault string, count, after int) error {
	body := struct {
		Fault string `json:"fault"`
		Count int    `json:"count"`
		After int    `json:"after"`
	}{fault, count, after}
	return c.do(ctx, http.MethodPost, RouteArm, body, nil)
}

// SetVariant switches the UI variant: [VariantA], [VariantB] or [VariantC].
func (c *Client) SetVariant(ctx context.Context, variant string) error {
	body := struct {
		Variant string `json:"variant"`
	}{variant}
	return c.do(ctx, http.MethodPost, RouteVariant, body, nil)
}

// State returns the control view of the server: variant, faults, sessions,
// the notice, request and content-POST counters.
func (c *Client) State(ctx context.Context) (State, error) {
	var st State
	err := c.do(ctx, http.MethodGet, RouteState, nil, &st)
	return st, err
}

// Ledger returns the business effects posted so far, oldest first.
func (c *Client) Ledger(ctx context.Context) ([]LedgerEntry, error) {
	var l struct {
		Entries []LedgerEntry `json:"entries"`
	}
	err := c.do(ctx, http.MethodGet, RouteLedger, nil, &l)
	return l.Entries, err
}

// DriftSpec is a drift variant to set: Kind is [DriftBenign],
// [DriftSemantic] or [DriftOff]; Seed picks the variant (ignored for off);
// Change optionally names one change of [DriftChanges] (semantic) or
// [DriftBenignChanges] (benign).
type DriftSpec struct {
	Kind   string
	Seed   int64
	Change string
}

// SetDrift sets (or, with kind off, clears) the drift variant and returns
// the status it put in force.
func (c *Client) SetDrift(ctx context.Context, d DriftSpec) (DriftStatus, error) {
	body := map[string]any{"kind": d.Kind}
	if d.Kind != DriftOff {
		body["seed"] = d.Seed
	}
	if d.Change != "" {
		body["change"] = d.Change
	}
	var v DriftStatus
	err := c.do(ctx, http.MethodPost, RouteDrift, body, &v)
	return v, err
}

// Drift returns the drift variant in force and its decoy hits.
func (c *Client) Drift(ctx context.Context) (DriftStatus, error) {
	var v DriftStatus
	err := c.do(ctx, http.MethodGet, RouteDrift, nil, &v)
	return v, err
}

// maxErrorBody bounds how much of a refused request's body is read.
const maxErrorBody = 4 << 10

// do sends one control request (a JSON body when body is not nil) and
// decodes a 200 answer into out when out is not nil.
func (c *Client) do(ctx context.Context, method, route string, body, out any) error {
	rd := io.Reader(http.NoBody)
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode body: %w", method, route, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+route, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, route, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, route, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		cerr := &ControlError{Method: method, Route: route, Status: resp.StatusCode}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		var e controlError
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			cerr.Message, cerr.Field = e.Error, e.Field
		} else {
			cerr.Message = strings.TrimSpace(string(raw))
		}
		return cerr
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyBytes))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, route, err)
	}
	return nil
}
