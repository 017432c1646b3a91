package mockapp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestClientControlsTheApp(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	ctx := t.Context()
	c := NewClient(b.base+"/", nil) // a trailing slash is tolerated

	if err := c.Arm(ctx, FaultTransientLoad, 2, 1); err != nil {
		t.Fatalf("Arm: %v", err)
	}
	if err := c.SetVariant(ctx, VariantC); err != nil {
		t.Fatalf("SetVariant: %v", err)
	}
	st, err := c.State(ctx)
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	if st.Variant != VariantC || st.Faults[FaultTransientLoad] != 2 {
		t.Errorf("state = variant %q faults %v, want c and transient_load 2", st.Variant, st.Faults)
	}

	if err := c.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	b.signOn(t)
	tok := b.reviewToken(t)
	if r := b.post(t, submitPath, url.Values{"token": {tok}}); r.status != http.StatusOK {
		t.Fatalf("submit = %d", r.status)
	}
	ledger, err := c.Ledger(ctx)
	if err != nil {
		t.Fatalf("Ledger: %v", err)
	}
	if len(ledger) != 1 || ledger[0].Kind != "transfer" || ledger[0].Amount == "" {
		t.Errorf("ledger = %+v, want one transfer", ledger)
	}
	st, err = c.State(ctx)
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	if st.Variant != VariantA || st.Faults[FaultTransientLoad] != 0 || st.Posts[submitPath] != 1 {
		t.Errorf("state after reset and one transfer = %+v", st)
	}
}

func TestClientDrift(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	ctx := t.Context()
	c := NewClient(b.base, nil)
	set, err := c.SetDrift(ctx, DriftSpec{Kind: DriftSemantic, Seed: 0, Change: DriftChanges[0]})
	if err != nil {
		t.Fatalf("SetDrift: %v", err)
	}
	if set.Drift == nil || set.Drift.Kind != DriftSemantic || set.Drift.Seed != 0 || set.Drift.Change != DriftChanges[0] {
		t.Fatalf("SetDrift = %+v, want the semantic variant of seed 0", set.Drift)
	}
	got, err := c.Drift(ctx)
	if err != nil {
		t.Fatalf("Drift: %v", err)
	}
	if got.Drift == nil || got.Drift.String() != set.Drift.String() || got.DecoyHits != 0 {
		t.Errorf("Drift = %+v, want %s and no decoy hits", got, set.Drift)
	}
	off, err := c.SetDrift(ctx, DriftSpec{Kind: DriftOff})
	if err != nil {
		t.Fatalf("SetDrift off: %v", err)
	}
	if off.Drift != nil {
		t.Errorf("drift after off = %+v, want none", off.Drift)
	}
}

func TestClientErrorsNameRouteAndStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	ctx := t.Context()
	c := NewClient(b.base, nil)
	tests := []struct {
		name       string
		call       func() error
		wantMethod string
		wantRoute  string
		wantStatus int
		wantField  string
	}{
		{name: "unknown fault", call: func() error { return c.Arm(ctx, "meteor", 1, 0) },
			wantMethod: "POST", wantRoute: RouteArm, wantStatus: 400, wantField: "fault"},
		{name: "count below -1", call: func() error { return c.Arm(ctx, FaultSlow, -2, 0) },
			wantMethod: "POST", wantRoute: RouteArm, wantStatus: 400, wantField: "count"},
		{name: "unknown variant", call: func() error { return c.SetVariant(ctx, "d") },
			wantMethod: "POST", wantRoute: RouteVariant, wantStatus: 400, wantField: "variant"},
		{name: "unknown drift change", call: func() error {
			_, err := c.SetDrift(ctx, DriftSpec{Kind: DriftSemantic, Change: "meteor"})
			return err
		}, wantMethod: "POST", wantRoute: RouteDrift, wantStatus: 400, wantField: "change"},
		{name: "app missing under the base", call: func() error {
			_, err := NewClient(b.base+"/nope", nil).State(ctx)
			return err
		}, wantMethod: "GET", wantRoute: RouteState, wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.call()
			var cerr *ControlError
			if !errors.As(err, &cerr) {
				t.Fatalf("error = %v, want a *ControlError", err)
			}
			if cerr.Method != tt.wantMethod || cerr.Route != tt.wantRoute || cerr.Status != tt.wantStatus || cerr.Field != tt.wantField {
				t.Errorf("error = %+v, want %s %s %d field %q", cerr, tt.wantMethod, tt.wantRoute, tt.wantStatus, tt.wantField)
			}
			for _, part := range []string{tt.wantMethod, tt.wantRoute, http.StatusText(tt.wantStatus)} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q does not name %q", err, part)
				}
			}
		})
	}
	if st, err := c.State(ctx); err != nil || st.Variant != VariantA || st.Faults[FaultSlow] != 0 {
		t.Errorf("refused requests changed the state: %+v, %v", st, err)
	}
}

func TestClientTimeoutAndContext(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hung.Close() })

	c := NewClient(hung.URL, &http.Client{Timeout: 100 * time.Millisecond})
	start := time.Now()
	err := c.Reset(t.Context())
	if err == nil || !strings.Contains(err.Error(), "POST "+RouteReset) {
		t.Fatalf("Reset on a hung app = %v, want an error naming POST %s", err, RouteReset)
	}
	// The app holds the request until the test ends: 30 s still proves
	// the 100 ms client timeout ended it, on a loaded machine too.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the client timeout did not bound the request: %s", d)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = NewClient(hung.URL, nil).Ledger(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "GET "+RouteLedger) {
		t.Errorf("Ledger with a cancelled context = %v, want context.Canceled naming GET %s", err, RouteLedger)
	}
}
