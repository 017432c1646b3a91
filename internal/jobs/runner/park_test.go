package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
)

// blockingParker parks until ctx ends.
type blockingParker struct{ got chan runtime.Parked }

func (p blockingParker) Park(ctx context.Context, pk runtime.Parked) error {
	p.got <- pk
	<-ctx.Done()
	return ctx.Err()
}

// TestRunParker: a parked run's row shows its inputs with the sensitive
// one masked and registered secrets redacted, and EndParks (a worker's
// drain) ends a park at once, so the run ends NEEDS_HUMAN as unparked.
func TestRunParker(t *testing.T) {
	t.Parallel()
	red := redact.New()
	red.RegisterLiteral("OP1001")
	spec := []domain.InputSpec{{Name: "member_id"}, {Name: "pin", Sensitive: true}, {Name: "note"}}
	got := maskInputs(spec, map[string]string{"member_id": "12345", "pin": "9999", "note": "for OP1001"}, red)
	if got["member_id"] != "12345" || got["pin"] != maskedInput || got["note"] == "for OP1001" || len(got) != 3 {
		t.Fatalf("masked inputs = %v", got)
	}
	snap := &domain.UiSnapshot{Nodes: []domain.Node{{Role: "heading", Name: "Transfer complete"}, {Role: "button", Name: "Go"},
		{Role: "heading", Name: "Operator OP1001"}}}
	if s := screenSummary(snap, red); s == "" || s[:17] != "Transfer complete" || strings.Contains(s, "OP1001") {
		t.Fatalf("screen summary = %q", s)
	}
	bp := blockingParker{got: make(chan runtime.Parked, 1)}
	r := New(t.Context(), Config{Park: bp})
	run, err := runtime.NewRun(runtime.RunConfig{ID: "r1", BaseURL: "http://app.test", Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- runParker{r: r, spec: spec, inputs: map[string]string{"pin": "9999"}}.Park(t.Context(), runtime.Parked{Run: run})
	}()
	pk := <-bp.got
	if pk.Waiting.Inputs["pin"] != maskedInput {
		t.Fatalf("the parker got inputs %v", pk.Waiting.Inputs)
	}
	r.EndParks()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("park after EndParks: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("EndParks did not end the park")
	}
}
