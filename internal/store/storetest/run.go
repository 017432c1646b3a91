package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// run returns a RUNNING run fixture of v.
func run(id string, v store.Version) store.Run {
	return store.Run{ID: id, CapabilityID: v.CapabilityID, Version: v.Version, ContentHash: v.ContentHash,
		Status: domain.StatusRunning, EvidencePath: ".cua/runs/" + id}
}

func testRuns(t *testing.T, h Harness) {
	b := setup(t, h)
	v := version("transfer", "1.0.0", "a")
	r := run("run-1", v)
	r.Eval, r.ApprovalID, r.InputsDigest = true, "ap-1", `{"amount":"ab12"}`
	got, err := b.st.RecordRun(b.ctx, r)
	if err != nil || !got.StartedAt.Equal(epoch) {
		t.Fatalf("RecordRun = %+v, %v; want started at the clock's %s", got, err, epoch)
	}
	if read, err := b.st.GetRun(b.ctx, "run-1"); err != nil || read.ChainHead != "" || read.Signature != "" {
		t.Fatalf("a running run's anchor = %q, %q, %v; want empty until its end", read.ChainHead, read.Signature, err)
	}
	if _, err := b.st.RecordRun(b.ctx, r); !errors.Is(err, store.ErrExists) {
		t.Errorf("recording run-1 twice: err = %v, want ErrExists", err)
	}
	if _, err := b.st.RecordRun(b.ctx, store.Run{ID: "run-2", CapabilityID: "x", ContentHash: "h"}); !errors.Is(err, store.ErrInvalid) ||
		!strings.Contains(err.Error(), "status") {
		t.Errorf("run without status: err = %v, want ErrInvalid naming status", err)
	}
	r.Status, r.Outcome, r.FailureCode = domain.StatusFailed, "transfer_refused", domain.CodePolicyDenied
	r.Effects = json.RawMessage(`{"submit":"sent_unconfirmed"}`)
	r.EndedAt, r.UnauthorizedDispatches = epoch.Add(3*time.Second+1234*time.Nanosecond), 1
	r.Outputs = json.RawMessage(`{"confirmation":"TRF-0001"}`)
	// The evidence anchor (invariant 18): the bundle's chain head and the
	// manifest's signature, written at the run's end.
	r.ChainHead, r.Signature = "sha256:"+strings.Repeat("c0", 32), "cua-ed25519-sig:"+strings.Repeat("QUJD", 22)+"==@k1"
	updated, err := b.st.UpdateRun(b.ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	read, err := b.st.GetRun(b.ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []store.Run{updated, read} {
		if g.Status != domain.StatusFailed || g.Outcome != "transfer_refused" || g.FailureCode != domain.CodePolicyDenied ||
			string(g.Effects) != `{"submit":"sent_unconfirmed"}` || !g.EndedAt.Equal(epoch.Add(3*time.Second+time.Microsecond)) ||
			g.UnauthorizedDispatches != 1 || !g.Eval || g.ApprovalID != "ap-1" || g.EvidencePath != ".cua/runs/run-1" ||
			!g.StartedAt.Equal(epoch) || g.Version != "1.0.0" || string(g.Outputs) != `{"confirmation":"TRF-0001"}` ||
			g.InputsDigest != `{"amount":"ab12"}` || g.ChainHead != r.ChainHead || g.Signature != r.Signature {
			t.Fatalf("run after update = %+v", g)
		}
	}
	if _, err := b.st.UpdateRun(b.ctx, run("absent", v)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateRun of an absent run: err = %v, want ErrNotFound", err)
	}
	if _, err := b.st.GetRun(b.ctx, "absent"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun of an absent run: err = %v, want ErrNotFound", err)
	}
}

func testListRuns(t *testing.T, h Harness) {
	b := setup(t, h)
	lookup, transfer := version("lookup", "1.0.0", "a"), version("transfer", "1.0.0", "a")
	fixtures := []struct {
		id     string
		v      store.Version
		status domain.RunStatus
	}{
		{"r1", lookup, domain.StatusSuccess},
		{"r2", transfer, domain.StatusFailed},
		{"r3", lookup, domain.StatusNeedsHuman},
		{"r4", transfer, domain.StatusSuccess},
	}
	for _, f := range fixtures {
		r := run(f.id, f.v)
		r.Status = f.status
		if _, err := b.st.RecordRun(b.ctx, r); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Minute)
	}
	tests := []struct {
		name string
		f    store.RunFilter
		want string
	}{
		{"all newest first", store.RunFilter{}, "r4,r3,r2,r1"},
		{"capability", store.RunFilter{CapabilityID: "lookup"}, "r3,r1"},
		{"status", store.RunFilter{Status: domain.StatusSuccess}, "r4,r1"},
		{"since", store.RunFilter{Since: epoch.Add(2 * time.Minute)}, "r4,r3"},
		{"hash and status", store.RunFilter{ContentHash: transfer.ContentHash, Status: domain.StatusFailed}, "r2"},
		{"limit", store.RunFilter{Limit: 1}, "r4"},
		{"none", store.RunFilter{CapabilityID: "lookup", Status: domain.StatusFailed}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.st.ListRuns(b.ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if strings.Join(ids, ",") != tt.want {
				t.Fatalf("ids = %v, want %s", ids, tt.want)
			}
		})
	}
}

func testIdempotencyConcurrent(t *testing.T, h Harness) {
	b := setup(t, h)
	v := version("transfer", "1.0.0", "a")
	const n = 12
	var wg sync.WaitGroup
	got := make([]store.Run, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			r := run(fmt.Sprintf("run-%02d", i), v)
			r.IdempotencyKey = "K"
			got[i], errs[i] = b.st.RecordRun(b.ctx, r)
		})
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Fatalf("runs %s and %s both claimed key K", winner, got[i].ID)
			}
			winner = got[i].ID
		}
	}
	if winner == "" {
		t.Fatal("no run claimed key K")
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		var ie *store.IdempotencyError
		if !errors.As(err, &ie) || !errors.Is(err, store.ErrIdempotencyKeyClaimed) || ie.RunID != winner || got[i].ID != winner {
			t.Fatalf("loser %d: run %q, err %v; want the first run %s and an IdempotencyError", i, got[i].ID, err, winner)
		}
		if _, err := b.st.GetRun(b.ctx, fmt.Sprintf("run-%02d", i)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("loser run-%02d was stored (err %v); a refused claim must write nothing", i, err)
		}
	}
	if owner, err := b.st.LookupIdempotencyKey(b.ctx, "transfer", "K"); err != nil || owner != winner {
		t.Fatalf("LookupIdempotencyKey = %q, %v; want %s", owner, err, winner)
	}
	other := run("other-cap", version("lookup", "1.0.0", "a"))
	other.IdempotencyKey = "K"
	if _, err := b.st.RecordRun(b.ctx, other); err != nil {
		t.Fatalf("the same key for another capability: %v", err)
	}
	if _, err := b.st.LookupIdempotencyKey(b.ctx, "transfer", "absent"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LookupIdempotencyKey of an absent key: err = %v, want ErrNotFound", err)
	}
}

func testCountEval(t *testing.T, h Harness) {
	b := setup(t, h)
	v, w := version("transfer", "1.0.0", "a"), version("transfer", "1.0.1", "a")
	fixtures := []struct {
		id           string
		v            store.Version
		eval         bool
		status       domain.RunStatus
		unauthorized int
	}{
		{"counts-1", v, true, domain.StatusSuccess, 0},
		{"counts-2", v, true, domain.StatusSuccess, 0},
		{"not-eval", v, false, domain.StatusSuccess, 0},
		{"failed", v, true, domain.StatusFailed, 0},
		{"unauthorized", v, true, domain.StatusSuccess, 1},
		{"other-hash", w, true, domain.StatusSuccess, 0},
	}
	for _, f := range fixtures {
		r := run(f.id, f.v)
		r.Eval, r.Status, r.UnauthorizedDispatches = f.eval, f.status, f.unauthorized
		if _, err := b.st.RecordRun(b.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.st.CountEvalSuccesses(b.ctx, v.ContentHash); err != nil || n != 2 {
		t.Fatalf("CountEvalSuccesses = %d, %v; want 2 (eval, SUCCESS, no unauthorized dispatch, this hash)", n, err)
	}
	if n, err := b.st.CountEvalSuccesses(b.ctx, "sha256:none"); err != nil || n != 0 {
		t.Fatalf("CountEvalSuccesses of an unknown hash = %d, %v; want 0", n, err)
	}
}
