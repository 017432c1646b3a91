package pipeline_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/surface"
)

// refusalBed is a deployment on a real SQLite store with a signing key and
// the example capabilities in its catalog.
type refusalBed struct {
	data   string
	key    ed25519.PublicKey
	st     *sqlite.DB
	cat    *catalog.Catalog
	l      *capability.Loaded
	opened int
}

func newRefusalBed(t *testing.T) *refusalBed {
	t.Helper()
	b := &refusalBed{data: t.TempDir()}
	var err error
	if _, b.key, err = signkey.Init(b.data, false); err != nil {
		t.Fatal(err)
	}
	if b.st, err = sqlite.Open(t.Context(), filepath.Join(b.data, "cua.db"), store.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.st.Close() })
	if b.cat, err = catalog.New(catalog.Config{Store: b.st, User: func() string { return "alice" }}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../examples/capabilities/*.yaml")
	for _, f := range files {
		if _, err := b.cat.AddFile(t.Context(), f); err != nil {
			t.Fatal(err)
		}
	}
	if b.l, _, err = b.cat.Resolve(t.Context(), "memberdesk.savings_balance"); err != nil {
		t.Fatal(err)
	}
	return b
}

// replay runs the lookup through the catalog's gate; no browser exists
// here, so a run the gate admits fails to open its surface.
func (b *refusalBed) replay(t *testing.T, id string, p catalog.RunParams, member string) *domain.RunRecord {
	t.Helper()
	open := func(context.Context) (surface.Surface, error) {
		b.opened++
		return nil, errors.New("no browser in this test")
	}
	rec, err := pipeline.Replay(t.Context(), pipeline.ReplayParams{Library: b.cat.Library(t.Context()), Gate: b.cat.Gate(p), Open: open,
		Run: replay.Options{Capability: b.l, RunID: id, Inputs: map[string]string{"member_id": member}, BaseURL: "http://127.0.0.1:9/", DataDir: b.data}})
	if err != nil && rec == nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return rec
}

// wantSignedRefusal checks a refused run is listed in the run index (what
// `cua runs` lists) with its bundle's anchor, and that its bundle verifies
// as `cua verify --key --db` does: share_ready, signature and head ok,
// run_started, run_refused naming check, run_finished.
func wantSignedRefusal(t *testing.T, st store.Store, key ed25519.PublicKey, rec *domain.RunRecord, code domain.FailureCode, check string) {
	t.Helper()
	if rec.Status != domain.StatusFailed || rec.FailureCode != code {
		t.Fatalf("run %s: %s %s (%s), want FAILED %s", rec.RunID, rec.Status, rec.FailureCode, rec.Message, code)
	}
	runs, err := st.ListRuns(t.Context(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var row *store.Run
	for i := range runs {
		if runs[i].ID == rec.RunID {
			row = &runs[i]
		}
	}
	if row == nil || row.Status != domain.StatusFailed || row.FailureCode != code || row.EvidencePath == "" ||
		row.ChainHead == "" || row.Signature == "" || row.EndedAt.IsZero() {
		t.Fatalf("run %s in the index: %+v; want FAILED %s with its evidence path and anchor", rec.RunID, row, code)
	}
	rep := evidence.VerifyWith(row.EvidencePath, evidence.VerifyOptions{Key: key, RequireSignature: true,
		Anchor: &evidence.Anchor{ChainHead: row.ChainHead, Signature: row.Signature}})
	if !rep.ShareReady || rep.Signature != evidence.SigOK || rep.Head != evidence.HeadOK {
		t.Fatalf("run %s: share_ready %v signature %s head %s: %v", rec.RunID, rep.ShareReady, rep.Signature, rep.Head, rep.Reasons)
	}
	raw, err := os.ReadFile(filepath.Join(row.EvidencePath, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var refusal evidence.RunRefused
	for line := range strings.Lines(string(raw)) {
		var e struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
		if e.Type == "run_refused" {
			_ = json.Unmarshal(e.Data, &refusal)
		}
	}
	if strings.Join(types, ",") != "run_started,run_refused,run_finished" {
		t.Errorf("run %s events %v, want run_started, run_refused, run_finished", rec.RunID, types)
	}
	if refusal.Code != code || refusal.Check != check || refusal.Reason == "" {
		t.Errorf("run %s refusal %+v, want code %s check %s and a reason", rec.RunID, refusal, code, check)
	}
}

// TestRefusedRunsHaveSignedBundles (invariant 18): every run `cua replay`
// refuses before a browser opens (no approval, a one-off approval already
// used, an expired approval, an idempotency key bound to other inputs,
// inputs outside the schema) has a signed bundle anchored in its index row, like any run.
func TestRefusedRunsHaveSignedBundles(t *testing.T) {
	t.Parallel()
	b := newRefusalBed(t)
	ctx := t.Context()

	rec := b.replay(t, "r-no-approval", catalog.RunParams{Unattended: true}, "12345")
	wantSignedRefusal(t, b.st, b.key, rec, domain.CodeApprovalRequired, evidence.CheckApproval)

	if _, err := b.cat.Approve(ctx, "memberdesk.savings_balance", catalog.ApproveParams{Once: true, Inputs: map[string]string{"member_id": "12345"}}); err != nil {
		t.Fatal(err)
	}
	opened := b.opened
	b.replay(t, "r-uses-approval", catalog.RunParams{Unattended: true}, "12345")
	if b.opened != opened+1 {
		t.Fatalf("the approved run opened %d surfaces, want 1", b.opened-opened)
	}
	rec = b.replay(t, "r-approval-used", catalog.RunParams{Unattended: true}, "12345")
	wantSignedRefusal(t, b.st, b.key, rec, domain.CodeApprovalRequired, evidence.CheckApproval)
	if !strings.Contains(rec.Message, "already used") {
		t.Errorf("message %q does not say the one-off approval was used", rec.Message)
	}

	if _, err := b.cat.Approve(ctx, "memberdesk.savings_balance", catalog.ApproveParams{Once: true, Inputs: map[string]string{"member_id": "34567"},
		Expires: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	rec = b.replay(t, "r-approval-expired", catalog.RunParams{Unattended: true}, "34567")
	wantSignedRefusal(t, b.st, b.key, rec, domain.CodeApprovalRequired, evidence.CheckApproval)
	if !strings.Contains(rec.Message, "expired") {
		t.Errorf("message %q does not say the approval expired", rec.Message)
	}

	b.replay(t, "r-key-first", catalog.RunParams{IdempotencyKey: "k1"}, "12345")
	rec = b.replay(t, "r-key-other", catalog.RunParams{IdempotencyKey: "k1"}, "23456")
	wantSignedRefusal(t, b.st, b.key, rec, domain.CodeInputInvalid, evidence.CheckIdempotencyKey)

	rec = b.replay(t, "r-bad-input", catalog.RunParams{}, "12 45")
	wantSignedRefusal(t, b.st, b.key, rec, domain.CodeInputInvalid, evidence.CheckInputs)

	if b.opened != opened+2 {
		t.Errorf("%d surfaces opened, want only the two admitted runs'", b.opened-opened)
	}
	if _, err := b.st.GetRun(ctx, "r-key-first"); err != nil {
		t.Errorf("the key's first run: %v", err)
	}
}
