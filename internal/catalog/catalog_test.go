package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

const transferFile = "../../examples/capabilities/memberdesk.transfer_funds.yaml"

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type testBundle struct {
	cat   *catalog.Catalog
	st    store.Store
	clock *clock
	ctx   context.Context
	ids   int
	runs  int
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	tb := &testBundle{clock: &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}, ctx: t.Context()}
	st, err := sqlite.Open(tb.ctx, filepath.Join(t.TempDir(), "cua.db"), store.Config{Now: tb.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	tb.st = st
	var mu sync.Mutex
	tb.cat, err = catalog.New(catalog.Config{Store: st, Now: tb.clock.Now,
		User: func() string { return "alice" },
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			tb.ids++
			return "ap-" + string(rune('a'+tb.ids-1))
		}})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edited returns the transfer capability with a new title, sealed, under
// the same id@version: a different file claiming the same ref.
func edited(t *testing.T, version string) []byte {
	t.Helper()
	var out []string
	for _, line := range strings.Split(string(readFile(t, transferFile)), "\n") {
		switch {
		case strings.HasPrefix(line, "content_hash:"):
			continue
		case strings.HasPrefix(line, "title:"):
			line = "title: Transfer funds (edited)"
		case strings.HasPrefix(line, "version:"):
			line = "version: " + version
		}
		out = append(out, line)
	}
	path := filepath.Join(t.TempDir(), "edited.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	return readFile(t, path)
}

func (tb *testBundle) add(t *testing.T, data []byte) store.Version {
	t.Helper()
	got, err := tb.cat.Add(tb.ctx, "test.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return got.Version
}

func (tb *testBundle) evals(t *testing.T, l *capability.Loaded, n int) {
	t.Helper()
	for i := range n {
		g := tb.cat.Gate(catalog.RunParams{Eval: true})
		tb.runs++
		id := fmt.Sprintf("eval-%d-%d", tb.runs, i)
		if _, _, err := g.Begin(tb.ctx, id, l, nil, ""); err != nil {
			t.Fatal(err)
		}
		if err := g.End(tb.ctx, &domain.RunRecord{RunID: id, Status: domain.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAddRefusesAnotherFileUnderTheSameRef(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	v := tb.add(t, readFile(t, transferFile))
	again, err := tb.cat.Add(tb.ctx, "again.yaml", readFile(t, transferFile))
	if err != nil || again.Created {
		t.Fatalf("re-adding the same file: created=%v err=%v, want a no-op", again.Created, err)
	}
	other := edited(t, "1.3.0")
	_, err = tb.cat.Add(tb.ctx, "edited.yaml", other)
	if !errors.Is(err, store.ErrImmutable) {
		t.Fatalf("different file under %s: err = %v, want ErrImmutable", v.Ref(), err)
	}
	l, _ := capability.Parse("edited.yaml", other)
	if msg := err.Error(); !strings.Contains(msg, v.ContentHash) || !strings.Contains(msg, l.Hash) {
		t.Errorf("error %q does not name both hashes %s and %s", msg, v.ContentHash, l.Hash)
	}
	vs, err := tb.cat.List(tb.ctx, "")
	if err != nil || len(vs) != 1 || vs[0].ContentHash != v.ContentHash {
		t.Fatalf("list after refusal = %+v, %v; want only the first version", vs, err)
	}
}

func TestAddRefusesDraftsAndTamperedFiles(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	sealed := string(readFile(t, transferFile))
	draft := strings.Join(slicesDelete(strings.Split(sealed, "\n"), "content_hash:"), "\n")
	tampered := strings.Replace(sealed, "title: Transfer funds between a member's accounts", "title: Something else", 1)
	tests := []struct {
		name, data, want string
	}{
		{"draft", draft, "is a draft"},
		{"tampered", tampered, "content"},
		{"not a capability", "hello: world\n", "test.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tb.cat.Add(tb.ctx, "test.yaml", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	if vs, _ := tb.cat.List(tb.ctx, ""); len(vs) != 0 {
		t.Fatalf("refused adds wrote %d versions", len(vs))
	}
}

func slicesDelete(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestResolveAndShow(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	v1 := tb.add(t, readFile(t, transferFile))
	v2 := tb.add(t, edited(t, "1.4.0"))
	for ref, want := range map[string]string{
		"memberdesk.transfer_funds":       v2.ContentHash,
		"memberdesk.transfer_funds@1.3.0": v1.ContentHash,
		v1.ContentHash:                    v1.ContentHash,
	} {
		l, _, err := tb.cat.Resolve(tb.ctx, ref)
		if err != nil || l.Hash != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", ref, l, err, want)
		}
	}
	if _, _, err := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds@9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve(missing) err = %v, want ErrNotFound", err)
	}
	// A row whose bytes were changed behind the catalog's back.
	bad := store.Version{CapabilityID: "memberdesk.transfer_funds", Version: "2.0.0", ContentHash: "sha256:" + strings.Repeat("0", 64),
		Status: store.StatusSealed, Body: readFile(t, transferFile)}
	if _, _, err := tb.st.AddVersion(tb.ctx, bad); err != nil {
		t.Fatal(err)
	}
	d, err := tb.cat.Show(tb.ctx, "memberdesk.transfer_funds@2.0.0")
	if err != nil || d.Integrity != catalog.IntegrityTampered {
		t.Fatalf("Show(tampered) = %+v, %v; want tampered", d, err)
	}
	if _, _, err := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds@2.0.0"); domain.ErrorCode(err) != domain.CodeHashMismatch {
		t.Errorf("Resolve(tampered) err = %v, want CONTENT_HASH_MISMATCH", err)
	}
	d, err = tb.cat.Show(tb.ctx, "memberdesk.transfer_funds@1.3.0")
	if err != nil || d.Integrity != catalog.IntegritySealed {
		t.Fatalf("Show(sealed) = %+v, %v", d, err)
	}
	changes, err := tb.cat.DiffRefs(tb.ctx, "memberdesk.transfer_funds@1.3.0", "memberdesk.transfer_funds@1.4.0")
	if err != nil || len(changes) != 2 {
		t.Fatalf("DiffRefs = %v, %v; want title and version changed", changes, err)
	}
}

func TestApproveFromEvalNeedsFiveSuccessfulEvals(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds")
	p := catalog.ApproveParams{FromEval: true, Max: map[string]string{"amount": "500.00"}}
	tb.evals(t, l, 4)
	if _, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", p); err == nil || !strings.Contains(err.Error(), "4 successful eval") {
		t.Fatalf("approve after 4 evals: err = %v, want a refusal counting 4", err)
	}
	// A failed eval run and a non-eval success do not count.
	g := tb.cat.Gate(catalog.RunParams{})
	if _, _, err := g.Begin(tb.ctx, "plain", l, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := g.End(tb.ctx, &domain.RunRecord{Status: domain.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", p); err == nil {
		t.Fatal("a non-eval run counted towards --from-eval")
	}
	tb.evals(t, l, 1)
	a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Approver != "alice" || a.ContentHash != l.Hash || a.Bounds.Max["amount"] != "500.00" {
		t.Errorf("approval = %+v", a)
	}
}

func TestApproveRefusesBadParams(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	tests := []struct {
		name string
		p    catalog.ApproveParams
		want string
	}{
		{"standing without eval", catalog.ApproveParams{}, "--from-eval"},
		{"unknown input", catalog.ApproveParams{Once: true, Inputs: map[string]string{"amout": "1"}}, "amout"},
		{"max of unknown input", catalog.ApproveParams{FromEval: true, Max: map[string]string{"amout": "1"}}, "max.amout"},
		{"max not a number", catalog.ApproveParams{FromEval: true, Max: map[string]string{"amount": "lots"}}, "max.amount"},
		{"bad pattern", catalog.ApproveParams{FromEval: true, Pattern: map[string]string{"member_id": "("}}, "pattern.member_id"},
		{"once without inputs", catalog.ApproveParams{Once: true}, "exact inputs"},
		{"negative expiry", catalog.ApproveParams{Once: true, Expires: -time.Hour}, "expires"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
	if as, _ := tb.st.ListApprovals(tb.ctx, store.ApprovalFilter{}); len(as) != 0 {
		t.Fatalf("refused approvals wrote %d rows", len(as))
	}
}

func transferInputs(amount string) map[string]any {
	return map[string]any{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": amount}
}

func TestAuthorizeRefusesWhatNoApprovalCovers(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	v2 := tb.add(t, edited(t, "1.4.0"))
	l1, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds@1.3.0")
	l2, _, _ := tb.cat.Resolve(tb.ctx, v2.Ref())
	tb.evals(t, l1, 5)
	std, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.3.0", catalog.ApproveParams{FromEval: true,
		Max: map[string]string{"amount": "500.00"}, Allowed: map[string][]string{"to_account": {"Checking"}}, Expires: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := tb.cat.Authorize(tb.ctx, l1, transferInputs("250.00"), "run-1"); err != nil || a.ID != std.ID {
		t.Fatalf("inside bounds: %+v, %v", a, err)
	}
	tests := []struct {
		name   string
		l      *capability.Loaded
		inputs map[string]any
		before func()
		want   string
	}{
		{"above the ceiling", l1, transferInputs("900.00"), nil, "input amount is outside"},
		{"value not allowed", l1, map[string]any{"member_id": "12345", "to_account": "Savings", "amount": "1.00"}, nil, "input to_account"},
		{"other content", l2, transferInputs("250.00"), nil, "approves other content"},
		{"expired", l1, transferInputs("250.00"), func() { tb.clock.Add(25 * time.Hour) }, "expired at"},
		{"revoked", l1, transferInputs("250.00"), func() {
			tb.clock.Add(-25 * time.Hour)
			if _, err := tb.cat.Revoke(tb.ctx, std.ID); err != nil {
				t.Fatal(err)
			}
		}, "revoked at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			_, err := tb.cat.Authorize(tb.ctx, tt.l, tt.inputs, "run-x")
			if domain.ErrorCode(err) != domain.CodeApprovalRequired || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want APPROVAL_REQUIRED naming %q", err, tt.want)
			}
		})
	}
}

func TestOneOffApprovalIsUsedOnce(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds")
	raw := map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "900"}
	a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", catalog.ApproveParams{Once: true, Inputs: raw, Note: "ticket 42"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Inputs["amount"] != "900.00" {
		t.Errorf("one-off approval binds amount %q, want the canonical 900.00", a.Inputs["amount"])
	}
	bound, err := capability.BindInputs(l.Capability, raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.cat.Authorize(tb.ctx, l, transferInputs("899.00"), "run-0"); domain.ErrorCode(err) != domain.CodeApprovalRequired {
		t.Fatalf("other inputs: err = %v, want APPROVAL_REQUIRED", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = tb.cat.Authorize(tb.ctx, l, bound, "run-"+string(rune('1'+i))) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if domain.ErrorCode(err) != domain.CodeApprovalRequired {
			t.Errorf("loser err = %v, want APPROVAL_REQUIRED", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d runs used one one-off approval, want exactly 1 (%v)", ok, errs)
	}
	if _, err := tb.cat.Authorize(tb.ctx, l, bound, "run-9"); err == nil || !strings.Contains(err.Error(), "already used by run") {
		t.Fatalf("second use: err = %v, want it naming the run that used it", err)
	}
}

func TestGateIdempotencyKey(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds")
	p := catalog.RunParams{IdempotencyKey: "k1"}
	g := tb.cat.Gate(p)
	if prior, _, err := g.Begin(tb.ctx, "first", l, nil, "/tmp/runs/first"); err != nil || prior != nil {
		t.Fatalf("first Begin = %v, %v", prior, err)
	}
	eff := &domain.Effects{Sent: true, Steps: []domain.StepEffect{{Step: "confirm", Risk: domain.RiskIrreversible, Effect: domain.EffectConfirmed}}}
	if err := g.End(tb.ctx, &domain.RunRecord{Status: domain.StatusSuccess, Outcome: "transferred", Effects: eff}); err != nil {
		t.Fatal(err)
	}
	prior, _, err := tb.cat.Gate(p).Begin(tb.ctx, "second", l, nil, "")
	if err != nil || prior == nil || prior.RunID != "first" || prior.Outcome != "transferred" || !prior.Effects.Sent {
		t.Fatalf("second Begin = %+v, %v; want the first run's record", prior, err)
	}
	if _, err := tb.cat.Run(tb.ctx, "second"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the repeat was indexed: %v", err)
	}
	// A first run whose effect is unconfirmed blocks the key.
	g = tb.cat.Gate(catalog.RunParams{IdempotencyKey: "k2"})
	if _, _, err := g.Begin(tb.ctx, "third", l, nil, ""); err != nil {
		t.Fatal(err)
	}
	eff = &domain.Effects{Sent: true, Unconfirmed: true, Steps: []domain.StepEffect{{Step: "confirm", Effect: domain.EffectSentUnconfirmed}}}
	if err := g.End(tb.ctx, &domain.RunRecord{Status: domain.StatusNeedsHuman, Effects: eff}); err != nil {
		t.Fatal(err)
	}
	_, _, err = tb.cat.Gate(catalog.RunParams{IdempotencyKey: "k2"}).Begin(tb.ctx, "fourth", l, nil, "")
	if !errors.Is(err, catalog.ErrEffectUnconfirmed) || !strings.Contains(err.Error(), "third") {
		t.Fatalf("err = %v, want ErrEffectUnconfirmed naming run third", err)
	}
}

// A run-level idempotency key (cua replay --idempotency-key) with other
// inputs is refused naming the input, never its value; with the same
// inputs it answers with the first run.
func TestGateKeyOtherInputs(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds")
	p := catalog.RunParams{IdempotencyKey: "k-250"}
	g := tb.cat.Gate(p)
	if _, _, err := g.Begin(tb.ctx, "r250", l, transferInputs("250.00"), ""); err != nil {
		t.Fatal(err)
	}
	if err := g.End(tb.ctx, &domain.RunRecord{Status: domain.StatusSuccess, Outputs: map[string]any{"confirmation": "TRF-0001"}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := tb.cat.Gate(p).Begin(tb.ctx, "r300", l, transferInputs("300.00"), "")
	if !errors.Is(err, catalog.ErrKeyOtherInputs) || domain.ErrorCode(err) != domain.CodeInputInvalid ||
		!strings.Contains(err.Error(), "(amount differ)") || strings.Contains(err.Error(), "300") {
		t.Fatalf("same key, other amount: %v; want INPUT_INVALID naming amount and no value", err)
	}
	prior, _, err := tb.cat.Gate(p).Begin(tb.ctx, "again", l, transferInputs("250.00"), "")
	if err != nil || prior == nil || prior.RunID != "r250" || prior.Outputs["confirmation"] != "TRF-0001" {
		t.Fatalf("same key, same inputs: %+v, %v; want the first run with its outputs", prior, err)
	}
}

func TestUnattendedGateRefusalIsIndexed(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds")
	_, _, err := tb.cat.Gate(catalog.RunParams{Unattended: true, IdempotencyKey: "k"}).Begin(tb.ctx, "r1", l, transferInputs("1.00"), "")
	if domain.ErrorCode(err) != domain.CodeApprovalRequired {
		t.Fatalf("err = %v, want APPROVAL_REQUIRED", err)
	}
	r, err := tb.cat.Run(tb.ctx, "r1")
	if err != nil || r.Status != domain.StatusFailed || r.FailureCode != domain.CodeApprovalRequired || r.IdempotencyKey != "" {
		t.Fatalf("refused run indexed as %+v, %v", r, err)
	}
}

func TestParseExpiry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true}, {"36h", 36 * time.Hour, true}, {"", 0, true},
		{"0d", 0, false}, {"-1h", 0, false}, {"soon", 0, false}, {"d", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := catalog.ParseExpiry(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("ParseExpiry(%q) = %v, %v", tt.in, got, err)
			}
		})
	}
}

func TestInputsSchemaBoundsTheRun(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds@1.3.0")
	tb.evals(t, l, 5)
	for name, bad := range map[string]string{
		"not JSON":  `{"type":`,
		"remote":    `{"$ref":"http://127.0.0.1:1/x.json"}`,
		"bad maxim": `{"properties":{"amount":{"maximum":"lots"}}}`,
	} {
		_, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.3.0", catalog.ApproveParams{FromEval: true, InputsSchema: json.RawMessage(bad)})
		if err == nil || !strings.Contains(err.Error(), "inputs-schema") {
			t.Errorf("%s: Approve = %v, want an error naming inputs-schema", name, err)
		}
	}
	if n := len(tb.approvals(t)); n != 0 {
		t.Fatalf("refused approvals wrote %d rows", n)
	}
	schema := `{"type":"object","properties":{"amount":{"type":"number","maximum":300}},"required":["amount"]}`
	a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.3.0", catalog.ApproveParams{FromEval: true, InputsSchema: json.RawMessage(schema)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tb.cat.Authorize(tb.ctx, l, transferInputs("250.00"), "run-1"); err != nil || got.ID != a.ID {
		t.Fatalf("inside the schema: %+v, %v", got, err)
	}
	_, err = tb.cat.Authorize(tb.ctx, l, transferInputs("300.01"), "run-2")
	if domain.ErrorCode(err) != domain.CodeApprovalRequired || !strings.Contains(err.Error(), "/amount fails maximum") {
		t.Fatalf("above the schema's maximum: %v", err)
	}
	if strings.Contains(err.Error(), "300.01") {
		t.Errorf("the refusal quotes the value: %v", err)
	}
}

func (tb *testBundle) approvals(t *testing.T) []store.Approval {
	t.Helper()
	as, err := tb.st.ListApprovals(tb.ctx, store.ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func TestAddOverlayIsAVersionOfItsOwn(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	base := tb.add(t, readFile(t, transferFile))
	r, err := tb.cat.AddOverlay(tb.ctx, base.Ref(), catalog.Overlay{Tenant: "acme", BaseURL: "http://127.0.0.1:8811",
		Targets: map[string]string{"review": "button:Check transfer"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Version.Version != "1.3.0+acme" || r.Version.ContentHash == base.ContentHash || !r.Created {
		t.Fatalf("overlay version %+v", r.Version)
	}
	l, v, err := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds@1.3.0+acme")
	if err != nil || v.ContentHash != r.Version.ContentHash || !l.Sealed {
		t.Fatalf("Resolve overlay: %+v %v", v, err)
	}
	if got := l.Capability.Step("review").Target.Name.Value; got != "Check transfer" {
		t.Errorf("relabelled target %q", got)
	}
	// An approval of the base never covers the overlay.
	lb, _, _ := tb.cat.Resolve(tb.ctx, base.Ref())
	tb.evals(t, lb, 5)
	if _, err := tb.cat.Approve(tb.ctx, base.Ref(), catalog.ApproveParams{FromEval: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.cat.Authorize(tb.ctx, l, transferInputs("1.00"), "run-o"); domain.ErrorCode(err) != domain.CodeApprovalRequired {
		t.Fatalf("the base's approval covered the overlay: %v", err)
	}
	// The same overlay again is the same version, not a new one.
	again, err := tb.cat.AddOverlay(tb.ctx, base.Ref(), catalog.Overlay{Tenant: "acme", BaseURL: "http://127.0.0.1:8811",
		Targets: map[string]string{"review": "button:Check transfer"}})
	if err != nil || again.Created || again.Version.ContentHash != r.Version.ContentHash {
		t.Fatalf("re-adding the same overlay: %+v %v", again, err)
	}
}

func TestUnstartedRunIsIndexed(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	l, _, _ := tb.cat.Resolve(tb.ctx, "memberdesk.transfer_funds@1.3.0")
	g := tb.cat.Gate(catalog.RunParams{Unattended: true, IdempotencyKey: "k"})
	rec := &domain.RunRecord{RunID: "r-bad", Status: domain.StatusFailed, FailureCode: domain.CodeInputInvalid}
	if err := g.Unstarted(tb.ctx, l, rec, "/data/runs/r-bad"); err != nil {
		t.Fatal(err)
	}
	got, err := tb.st.GetRun(tb.ctx, "r-bad")
	if err != nil || got.Status != domain.StatusFailed || got.FailureCode != domain.CodeInputInvalid || got.ContentHash != l.Hash || got.EndedAt.IsZero() {
		t.Fatalf("indexed run %+v, %v", got, err)
	}
	if _, err := tb.st.LookupIdempotencyKey(tb.ctx, "memberdesk.transfer_funds", "k"); err == nil {
		t.Error("a run that never started claimed the idempotency key")
	}
}
