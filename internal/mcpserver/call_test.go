package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/mcpserver"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/toolspec"
)

var wantOutputs = map[string]any{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}

// The approved lookup is listed with its closed schemas; the sign-on and
// the transfer, not approved, are neither listed nor callable, and calling
// them reaches no application.
func TestListsOnlyApprovedAndRefusesTheRest(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1)
	cs, _ := tb.connect(t)
	res, err := cs.ListTools(tb.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != lookup {
		t.Fatalf("tools = %v, want only %s", names(t, cs), lookup)
	}
	in := res.Tools[0].InputSchema.(map[string]any)
	if in["additionalProperties"] != false || res.Tools[0].OutputSchema == nil {
		t.Errorf("input schema not closed or no output schema: %v", in)
	}
	before := tb.requests(t)
	for _, name := range []string{"memberdesk_transfer_funds", "corebank_auth_sign_on"} {
		_, err := cs.CallTool(tb.ctx, mcpParams(name, map[string]any{"member_id": "12345"}))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("call %s: err = %v, want an unknown-tool error", name, err)
		}
	}
	if after := tb.requests(t); after != before {
		t.Errorf("MemberDesk served %d requests for unapproved calls, want 0", after-before)
	}
}

// A real replay of the reference lookup in Chromium: typed outputs, one
// progress notification per step, evidence and an index entry with its
// anchor as for any replay; then a member that does not exist is a business outcome.
func TestCallReturnsOutputsThenABusinessOutcome(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1)
	cs, progress := tb.connect(t)
	r, res := call(t, cs, lookup, map[string]any{"member_id": "12345"}, "tok-1")
	if r.Status != domain.StatusSuccess || res.IsError || fmt.Sprint(r.Outputs) != fmt.Sprint(wantOutputs) {
		t.Fatalf("result = %+v, want SUCCESS with %v", r, wantOutputs)
	}
	msgs := progress.all()
	if len(msgs) < 6 || !slices.Contains(msgs, "step read_as_of: ok") {
		t.Errorf("progress = %q, want one per step", msgs)
	}
	run, err := tb.cat.Run(tb.ctx, r.RunID)
	if err != nil || run.Status != domain.StatusSuccess || run.ApprovalID == "" || run.ChainHead == "" || run.EvidencePath == "" {
		t.Errorf("index entry %+v (%v), want SUCCESS under an approval, anchored (chain head) like any replay", run, err)
	}
	if _, err := os.Stat(filepath.Join(tb.dataDir, "runs", r.RunID, "record.json")); err != nil {
		t.Errorf("evidence: %v", err)
	}

	r, res = call(t, cs, lookup, map[string]any{"member_id": "99999"}, nil)
	if r.Status != domain.StatusBusinessOutcome || r.Outcome != "member_not_found" || res.IsError || r.Outputs != nil {
		t.Fatalf("result = %+v, want BUSINESS_OUTCOME member_not_found", r)
	}
}

// Arguments outside the schema are refused as INPUT_INVALID before a
// session opens: MemberDesk serves nothing, and the refusal is a run with
// evidence and an index entry.
func TestBadInputIsRefusedWithNoDispatch(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1)
	cs, _ := tb.connect(t)
	before := tb.requests(t)
	for _, tc := range []struct {
		name  string
		args  map[string]any
		fails string
	}{
		{"pattern", map[string]any{"member_id": "12a45"}, "/member_id fails pattern"},
		{"type", map[string]any{"member_id": 12345}, "/member_id fails type"},
		{"missing", map[string]any{}, "required member_id"},
		{"extra", map[string]any{"member_id": "12345", "note": "x"}, "additionalProperties note"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, res := call(t, cs, lookup, tc.args, nil)
			if r.Status != domain.StatusFailed || r.FailureCode != string(domain.CodeInputInvalid) || !res.IsError ||
				!strings.Contains(r.Message, tc.fails) {
				t.Fatalf("result = %+v, want FAILED INPUT_INVALID with %q", r, tc.fails)
			}
			if strings.Contains(r.Message, "12a45") {
				t.Errorf("message quotes the value: %s", r.Message)
			}
			run, err := tb.cat.Run(tb.ctx, r.RunID)
			if err != nil || run.FailureCode != domain.CodeInputInvalid {
				t.Errorf("index entry %+v (%v), want INPUT_INVALID", run, err)
			}
			if _, err := os.Stat(filepath.Join(tb.dataDir, "runs", r.RunID, "record.json")); err != nil {
				t.Errorf("evidence: %v", err)
			}
		})
	}
	if after := tb.requests(t); after != before {
		t.Errorf("MemberDesk served %d requests for refused calls, want 0", after-before)
	}
}

// With two approvals the schema cannot carry both bounds, so the catalog's
// gate judges each call: one outside both is refused as APPROVAL_REQUIRED
// with no session opened.
func TestOutOfBoundsCallIsRefusedByTheGate(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1, func(tb *testBundle) {
		tb.approve(t, lookupRef, catalog.ApproveParams{FromEval: true, Pattern: map[string]string{"member_id": "1[0-9]{4}"}})
		tb.approve(t, lookupRef, catalog.ApproveParams{FromEval: true, Pattern: map[string]string{"member_id": "2[0-9]{4}"}})
	})
	cs, _ := tb.connect(t)
	before := tb.requests(t)
	r, res := call(t, cs, lookup, map[string]any{"member_id": "99999"}, nil)
	if r.Status != domain.StatusFailed || r.FailureCode != string(domain.CodeApprovalRequired) || !res.IsError {
		t.Fatalf("result = %+v, want FAILED APPROVAL_REQUIRED", r)
	}
	if after := tb.requests(t); after != before {
		t.Errorf("MemberDesk served %d requests for a refused call, want 0", after-before)
	}
}

// A revoked approval takes the tool off the list at the next request.
func TestRevokedApprovalIsUnlisted(t *testing.T) {
	t.Parallel()
	var a store.Approval
	tb := setup(t, 1, func(tb *testBundle) { a = tb.approve(t, lookupRef, catalog.ApproveParams{FromEval: true}) })
	cs, _ := tb.connect(t)
	if got := names(t, cs); !slices.Equal(got, []string{lookup}) {
		t.Fatalf("tools = %v", got)
	}
	if _, err := tb.cat.Revoke(tb.ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := names(t, cs); len(got) != 0 {
		t.Fatalf("tools after revoke = %v, want none", got)
	}
	if _, err := cs.CallTool(tb.ctx, mcpParams(lookup, map[string]any{"member_id": "12345"})); err == nil {
		t.Fatal("a revoked tool was callable")
	}
}

// Two calls at once share the browser, each in a context of its own, and
// each gets its own answer; with one session allowed, the second run
// begins only after the first has ended.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	for _, max := range []int{2, 1} {
		t.Run(fmt.Sprintf("max sessions %d", max), func(t *testing.T) {
			t.Parallel()
			tb := setup(t, max)
			cs, _ := tb.connect(t)
			var wg sync.WaitGroup
			got := make([]toolspec.Result, 2)
			for i, member := range []string{"12345", "99999"} {
				wg.Go(func() { got[i], _ = call(t, cs, lookup, map[string]any{"member_id": member}, nil) })
			}
			wg.Wait()
			if got[0].Status != domain.StatusSuccess || fmt.Sprint(got[0].Outputs) != fmt.Sprint(wantOutputs) {
				t.Errorf("first call = %+v", got[0])
			}
			if got[1].Status != domain.StatusBusinessOutcome || got[1].Outcome != "member_not_found" {
				t.Errorf("second call = %+v", got[1])
			}
			if got[0].RunID == got[1].RunID {
				t.Fatalf("two calls share run id %s", got[0].RunID)
			}
			if max > 1 {
				return
			}
			a, errA := tb.cat.Run(tb.ctx, got[0].RunID)
			b, errB := tb.cat.Run(tb.ctx, got[1].RunID)
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if a.StartedAt.After(b.StartedAt) {
				a, b = b, a
			}
			if b.StartedAt.Before(a.EndedAt) {
				t.Errorf("with one session, run %s began at %s before run %s ended at %s", b.ID, b.StartedAt, a.ID, a.EndedAt)
			}
		})
	}
}

// A run that stops for a person is NEEDS_HUMAN with its failure code, its
// run id and where to take it over.
func TestNeedsHumanCarriesRunIDAndTakeover(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1)
	tb.srv = tb.server(t, mcpserver.Config{ConsoleURL: "http://127.0.0.1:8812/"})
	cs, _ := tb.connect(t)
	if err := tb.appc.Arm(tb.ctx, "transient_load", -1, 0); err != nil {
		t.Fatal(err)
	}
	r, res := call(t, cs, lookup, map[string]any{"member_id": "12345"}, nil)
	if r.Status != domain.StatusNeedsHuman || r.FailureCode != string(domain.CodeRecoveryExhausted) || !res.IsError || r.RunID == "" ||
		r.Takeover != "http://127.0.0.1:8812/runs/"+r.RunID || r.Outputs != nil {
		t.Fatalf("result = %+v, want NEEDS_HUMAN RECOVERY_EXHAUSTED with run id and takeover", r)
	}
	if run, err := tb.cat.Run(tb.ctx, r.RunID); err != nil || run.Status != domain.StatusNeedsHuman {
		t.Errorf("index entry %+v (%v)", run, err)
	}
}

// TestRefusedCallsHaveSignedBundles (invariant 18): a call refused before
// a session opens, for its arguments or by the catalog's gate, is a run
// like any other: the run index lists it with its evidence path and
// anchor, and its bundle (run_started, run_refused naming the check,
// run_finished) verifies share_ready with the deployment key and the
// store's anchor, as `cua verify --key --db` checks it.
func TestRefusedCallsHaveSignedBundles(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1, func(tb *testBundle) {
		tb.approve(t, lookupRef, catalog.ApproveParams{FromEval: true, Pattern: map[string]string{"member_id": "1[0-9]{4}"}})
		tb.approve(t, lookupRef, catalog.ApproveParams{FromEval: true, Pattern: map[string]string{"member_id": "2[0-9]{4}"}})
	})
	_, key, err := signkey.Init(tb.dataDir, false)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := tb.connect(t)
	for _, tc := range []struct {
		name  string
		args  map[string]any
		code  domain.FailureCode
		check string
	}{
		{"arguments", map[string]any{"member_id": "12a45"}, domain.CodeInputInvalid, evidence.CheckInputs},
		{"gate", map[string]any{"member_id": "99999"}, domain.CodeApprovalRequired, evidence.CheckApproval},
	} {
		r, _ := call(t, cs, lookup, tc.args, nil)
		if r.Status != domain.StatusFailed || r.FailureCode != string(tc.code) {
			t.Fatalf("%s: result %+v, want FAILED %s", tc.name, r, tc.code)
		}
		runs, err := tb.cat.Runs(tb.ctx, store.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(runs, func(x store.Run) bool { return x.ID == r.RunID })
		if i < 0 || runs[i].ChainHead == "" || runs[i].Signature == "" || runs[i].EvidencePath == "" {
			t.Fatalf("%s: run %s not listed with its anchor: %v", tc.name, r.RunID, runs)
		}
		row := runs[i]
		rep := evidence.VerifyWith(row.EvidencePath, evidence.VerifyOptions{Key: key, RequireSignature: true,
			Anchor: &evidence.Anchor{ChainHead: row.ChainHead, Signature: row.Signature}})
		if !rep.ShareReady || rep.Signature != evidence.SigOK || rep.Head != evidence.HeadOK {
			t.Fatalf("%s: share_ready %v signature %s head %s: %v", tc.name, rep.ShareReady, rep.Signature, rep.Head, rep.Reasons)
		}
		events, err := os.ReadFile(filepath.Join(row.EvidencePath, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(events), "\n"); n != 3 || !strings.Contains(string(events), `"type":"run_started"`) ||
			!strings.Contains(string(events), `"check":"`+tc.check+`"`) {
			t.Errorf("%s: %d events, want run_started, run_refused (check %s), run_finished:\n%s", tc.name, n, tc.check, events)
		}
	}
}
