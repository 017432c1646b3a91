package replay_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/sim"
	"github.com/cuahq/cua/schema"
)

var eventLogSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.EventLog))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schema.EventLogID, doc); err != nil {
		return nil, err
	}
	return c.Compile(schema.EventLogID)
})

// validateEventLog validates every line of a run's events.jsonl against
// schema/event-log.schema.json and returns the event types seen.
func validateEventLog(t *testing.T, dir string) map[string]bool {
	t.Helper()
	sch, err := eventLogSchema()
	if err != nil {
		t.Fatalf("compile the event log schema: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(raw)) {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("event %s does not match schema/event-log.schema.json: %v", strings.TrimSpace(line), err)
		}
		if m, ok := v.(map[string]any); ok {
			typ, _ := m["type"].(string)
			seen[typ] = true
		}
	}
	return seen
}

// TestEventLogSchema: a real replay on the sim surface with a recovery and
// an effect writes an event log whose every line matches the published
// schema (every other replay test checks its own log the same way, in
// checkEvidence), and the schema is not vacuous: a line with a data field
// its kind does not have is refused.
func TestEventLogSchema(t *testing.T) {
	t.Parallel()
	b := setup(t, spec{cap: "waiter.yaml", app: func() *sim.Flow { return waiterApp(false, sim.Goto("closed"), sim.Nth(1, sim.Fault(502))) }})
	rec := b.run(t)
	if rec.Status != domain.StatusSuccess || rec.RecoveryAttempts != 1 {
		t.Fatalf("run %s with %d recoveries, want SUCCESS after 1", rec.Status, rec.RecoveryAttempts)
	}
	dir := filepath.Join(b.opts.DataDir, "runs", b.opts.RunID)
	seen := validateEventLog(t, dir)
	for _, typ := range []string{"run_started", "action_dispatched", "step_finished", "recovery", "run_finished"} {
		if !seen[typ] {
			t.Errorf("the log has no %s event (types %v)", typ, seen)
		}
	}

	sch, err := eventLogSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"seq":1,"at":"2026-01-02T03:04:05Z","type":"recovery","data":{"rule":"r","remedy":"reload","attempt":1,"extra":"x"},"prev":"sha256:genesis","hash":"sha256:` + strings.Repeat("0", 64) + `"}`,
		`{"seq":1,"at":"2026-01-02T03:04:05Z","type":"recovery","data":{"rule":"r","remedy":"reload"},"prev":"sha256:genesis","hash":"sha256:` + strings.Repeat("0", 64) + `"}`,
		`{"seq":1,"at":"2026-01-02T03:04:05Z","type":"no_such_kind","prev":"sha256:genesis","hash":"sha256:` + strings.Repeat("0", 64) + `"}`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
