package toolspec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/toolspec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const examples = "../../examples/capabilities"

var now = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

type testBundle struct {
	ctx context.Context
	cat *catalog.Catalog
	ids int
}

// setup is a catalog holding the three example capabilities: the savings
// lookup approved without bounds, the transfer approved for amounts up to
// 500.00 into Checking, the sign-on not approved.
func setup(t *testing.T) *testBundle {
	t.Helper()
	tb := &testBundle{ctx: t.Context()}
	st, err := sqlite.Open(tb.ctx, filepath.Join(t.TempDir(), "cua.db"), store.Config{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	tb.cat, err = catalog.New(catalog.Config{Store: st, Now: func() time.Time { return now }, User: func() string { return "alice" },
		NewID: func() string { tb.ids++; return fmt.Sprintf("ap-%d", tb.ids) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"corebank.auth.sign_on.yaml", "memberdesk.savings_balance.yaml", "memberdesk.transfer_history.yaml", "memberdesk.transfer_funds.yaml"} {
		if _, err := tb.cat.AddFile(tb.ctx, filepath.Join(examples, f)); err != nil {
			t.Fatal(err)
		}
	}
	tb.approve(t, "memberdesk.savings_balance@1.2.0", catalog.ApproveParams{FromEval: true})
	tb.approve(t, "memberdesk.transfer_funds@1.3.0", catalog.ApproveParams{FromEval: true,
		Max: map[string]string{"amount": "500.00"}, Allowed: map[string][]string{"to_account": {"Checking"}}})
	return tb
}

// approve records the eval successes an approval needs, then approves ref.
func (tb *testBundle) approve(t *testing.T, ref string, p catalog.ApproveParams) {
	t.Helper()
	l, _, err := tb.cat.Resolve(tb.ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for i := range catalog.MinEvalRuns {
		g := tb.cat.Gate(catalog.RunParams{Eval: true})
		id := fmt.Sprintf("eval-%s-%d", l.Capability.ID, i)
		if _, _, err := g.Begin(tb.ctx, id, l, nil, ""); err != nil {
			t.Fatal(err)
		}
		if err := g.End(tb.ctx, &domain.RunRecord{RunID: id, Status: domain.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.cat.Approve(tb.ctx, ref, p); err != nil {
		t.Fatal(err)
	}
}

func (tb *testBundle) export(t *testing.T, f toolspec.Format, refs ...string) []byte {
	t.Helper()
	specs, err := toolspec.Approved(tb.ctx, tb.cat, now, refs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := toolspec.Write(&buf, f, specs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the export (run with -update after checking):\n%s", path, got)
	}
}

func compileFile(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExportMatchesGoldensAndProviderShapes(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	for _, f := range toolspec.Formats {
		t.Run(string(f), func(t *testing.T) {
			got := tb.export(t, f)
			golden(t, "tools."+string(f)+".json", got)
			shape := map[toolspec.Format]string{toolspec.FormatOpenAI: "openai-function-tool", toolspec.FormatAnthropic: "anthropic-tool",
				toolspec.FormatMCP: "mcp-tool"}[f]
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if err := compileFile(t, filepath.Join("testdata", shape+".schema.json")).Validate(doc); err != nil {
				t.Errorf("export does not fit the %s shape: %v", f, err)
			}
			if n := len(doc.([]any)); n != 2 {
				t.Errorf("exported %d tools, want 2 (the sign-on is not approved)", n)
			}
		})
	}
}

// Every exported input and output schema is itself a valid 2020-12
// schema, closed, and accepts the capability's own example.
func TestSchemasCompileAndAcceptTheExamples(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	specs, err := toolspec.Approved(tb.ctx, tb.cat, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: input schema is not closed", s.Name)
		}
		ex := map[string]any{}
		for _, in := range s.Loaded.Capability.Inputs {
			p := s.InputSchema["properties"].(map[string]any)[in.Name].(map[string]any)
			ex[in.Name] = p["examples"].([]any)[0]
		}
		raw, _ := json.Marshal(ex)
		if _, err := s.Args(raw); err != nil {
			t.Errorf("%s: its own examples %s fail: %v", s.Name, raw, err)
		}
		for _, sch := range []map[string]any{s.InputSchema, s.OutputSchema} {
			data, _ := json.Marshal(sch)
			doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			c := jsonschema.NewCompiler()
			if err := c.AddResource("s.json", doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile("s.json"); err != nil {
				t.Errorf("%s: schema does not compile: %v", s.Name, err)
			}
		}
	}
}

func TestUnapprovedRefIsRefusedByName(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	for _, ref := range []string{"corebank.auth.sign_on", "corebank.auth.sign_on@1.0.0"} {
		_, err := toolspec.Approved(tb.ctx, tb.cat, now, []string{"memberdesk.savings_balance", ref})
		if !errors.Is(err, toolspec.ErrNotApproved) || !strings.Contains(err.Error(), ref) {
			t.Errorf("%s: err = %v, want ErrNotApproved naming it", ref, err)
		}
	}
	if _, err := toolspec.Approved(tb.ctx, tb.cat, now, []string{"no.such"}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no.such") {
		t.Errorf("unknown ref: err = %v, want not found naming it", err)
	}
	// An expired approval approves nothing.
	later := now.Add(time.Hour)
	specs, err := toolspec.Approved(tb.ctx, tb.cat, later, []string{"memberdesk.savings_balance"})
	if err != nil || len(specs) != 1 {
		t.Fatalf("later: %v %v", specs, err)
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 70)
	for _, tc := range []struct{ name, id, want string }{
		{"dots", "memberdesk.savings_balance", "memberdesk_savings_balance"},
		{"kept", "a-b_C9", "a-b_C9"},
		{"unicode and spaces", "café au lait", "caf__au_lait"},
		{"long", long, strings.Repeat("x", 55) + "_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := toolspec.Name(tc.id)
			if !toolspec.NamePattern.MatchString(got) || !strings.HasPrefix(got, tc.want) {
				t.Errorf("Name(%q) = %q, want %q… within %s", tc.id, got, tc.want, toolspec.NamePattern)
			}
		})
	}
	if toolspec.Name(long) == toolspec.Name(long+"y") {
		t.Error("two long ids share a name")
	}
}

func TestCheckNamesRefusesACollision(t *testing.T) {
	t.Parallel()
	a := &toolspec.Spec{Name: toolspec.Name("a.b"), Capability: "a.b@1.0.0"}
	b := &toolspec.Spec{Name: toolspec.Name("a_b"), Capability: "a_b@1.0.0"}
	err := toolspec.CheckNames([]*toolspec.Spec{a, b})
	if err == nil || !strings.Contains(err.Error(), "a.b@1.0.0") || !strings.Contains(err.Error(), "a_b@1.0.0") {
		t.Fatalf("err = %v, want a collision naming both", err)
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	specs, err := toolspec.Approved(tb.ctx, tb.cat, now, []string{"memberdesk.transfer_funds"})
	if err != nil {
		t.Fatal(err)
	}
	s := specs[0]
	ok := `"member_id":"12345","from_account":"Savings","to_account":"Checking"`
	for _, tc := range []struct {
		name, args string
		want       map[string]string
		fails      string
	}{
		{"valid, amount as written", `{` + ok + `,"amount":250.00}`, map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "250.00"}, ""},
		{"over the approval's max", `{` + ok + `,"amount":900}`, nil, "/amount fails maximum"},
		{"outside the approval's allowed", `{"member_id":"12345","from_account":"Checking","to_account":"Savings","amount":1}`, nil, "/to_account fails enum"},
		{"pattern", `{"member_id":"12a45","from_account":"Savings","to_account":"Checking","amount":1}`, nil, "/member_id fails pattern"},
		{"type", `{"member_id":12345,"from_account":"Savings","to_account":"Checking","amount":1}`, nil, "/member_id fails type"},
		{"missing", `{` + ok + `}`, nil, "/ fails required amount"},
		{"extra", `{` + ok + `,"amount":1,"memo":"x"}`, nil, "/ fails additionalProperties memo"},
		{"not JSON", `{`, nil, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Args(json.RawMessage(tc.args))
			if tc.fails == "" {
				if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("Args = %v, %v; want %v", got, err, tc.want)
				}
				if _, err := capability.BindInputs(s.Loaded.Capability, got); err != nil {
					t.Fatalf("bound args do not bind: %v", err)
				}
				return
			}
			if domain.ErrorCode(err) != domain.CodeInputInvalid || !strings.Contains(err.Error(), tc.fails) {
				t.Fatalf("err = %v, want INPUT_INVALID with %q", err, tc.fails)
			}
			if strings.Contains(err.Error(), "12a45") {
				t.Fatalf("err quotes a value: %v", err)
			}
		})
	}
}

func TestNewResult(t *testing.T) {
	t.Parallel()
	base := domain.RunRecord{RunID: "r1", Capability: "c@1.0.0", ContentHash: "sha256:x",
		Outputs: map[string]any{"b": "1.00"}, Outcome: "member_not_found", FailureCode: domain.CodeTargetNotFound, Message: "m"}
	for _, tc := range []struct {
		status domain.RunStatus
		want   string
	}{
		{domain.StatusSuccess, `{"status":"SUCCESS","run_id":"r1","capability":"c@1.0.0","content_hash":"sha256:x","outputs":{"b":"1.00"}}`},
		{domain.StatusBusinessOutcome, `{"status":"BUSINESS_OUTCOME","run_id":"r1","capability":"c@1.0.0","content_hash":"sha256:x","outcome":"member_not_found"}`},
		{domain.StatusNeedsHuman, `{"status":"NEEDS_HUMAN","run_id":"r1","capability":"c@1.0.0","content_hash":"sha256:x","failure_code":"TARGET_NOT_FOUND","message":"m","takeover":"http://console/runs/r1"}`},
		{domain.StatusFailed, `{"status":"FAILED","run_id":"r1","capability":"c@1.0.0","content_hash":"sha256:x","failure_code":"TARGET_NOT_FOUND","message":"m"}`},
	} {
		rec := base
		rec.Status = tc.status
		got, _ := json.Marshal(toolspec.NewResult(&rec, "http://console/runs/r1"))
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.status, got, tc.want)
		}
	}
}
