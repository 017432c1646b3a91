package evidence_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/schema"
)

// TestEventKindsMatchSchema: the schema lists exactly the Go event kinds,
// and a log holding one event of every kind, written through a Bundle,
// validates line by line.
func TestEventKindsMatchSchema(t *testing.T) {
	t.Parallel()
	var doc struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(schema.EventLog, &doc); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, k := range evidence.Kinds() {
		kinds = append(kinds, k.EventType())
		if _, ok := doc.Defs[k.EventType()]; !ok {
			t.Errorf("schema has no $defs entry for %s", k.EventType())
		}
	}
	if !slices.Equal(doc.Properties.Type.Enum, kinds) {
		t.Errorf("schema types %q, Go kinds %q", doc.Properties.Type.Enum, kinds)
	}

	tb := setup(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, k := range evidence.Kinds() {
		mustAppend(t, tb.bundle, evidence.NewEvent(at, domain.ActorAutomation, "s1", k))
	}
	full := evidence.ActionDispatched{Action: domain.ActClick, Risk: domain.RiskElevated, DurationMS: 12, Epoch: 3,
		Role: "button", Name: "Save", Frame: "content", Strategy: domain.StrategySemanticExact, Value: "x", URL: "http://127.0.0.1/"}
	mustAppend(t, tb.bundle, evidence.NewEvent(at, domain.ActorAutomation, "s1", evidence.DispatchFailed{ActionDispatched: full, Error: "boom"}))
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	sch := compileEventLog(t)
	raw, err := os.ReadFile(filepath.Join(tb.bundle.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(raw)) {
		n++
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: %v", strings.TrimSpace(line), err)
		}
	}
	if n != len(kinds)+1 {
		t.Errorf("%d lines, want %d", n, len(kinds)+1)
	}
}

// TestTypedEventIsRedactedAndChained: a typed payload is written as its
// JSON shape, redacted like any event, and chained.
func TestTypedEventIsRedactedAndChained(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	const secret = "Hunter2-canary-9911"
	tb.red.RegisterLiteral(secret)
	mustAppend(t, tb.bundle, evidence.NewEvent(time.Unix(0, 0), domain.ActorAgent, "", evidence.InvalidTurn{Error: "said " + secret, Attempt: 2}))
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(tb.bundle.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) {
		t.Errorf("events.jsonl carries the secret: %s", raw)
	}
	var e evidence.Event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if e.Type != "invalid_turn" || e.Actor != domain.ActorAgent || e.Data["error"] != "said "+redact.Marker || e.Data["attempt"] != 2.0 {
		t.Errorf("event = %+v", e)
	}
	if e.Seq != 1 || e.Prev != "sha256:genesis" || !strings.HasPrefix(e.Hash, "sha256:") {
		t.Errorf("chain seq=%d prev=%q hash=%q", e.Seq, e.Prev, e.Hash)
	}
}

func compileEventLog(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.EventLog))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schema.EventLogID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schema.EventLogID)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}
