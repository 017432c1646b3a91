package hitl_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

type brokerBundle struct {
	ctx    context.Context
	clock  *clock
	path   string
	db     *sqlite.DB
	broker *hitl.Broker
}

// setupBroker opens a real SQLite file and a broker over it whose
// summaries lose the word "4111-1111" (a stand-in redactor).
func setupBroker(t *testing.T) *brokerBundle {
	t.Helper()
	b := &brokerBundle{ctx: t.Context(), clock: newClock(), path: filepath.Join(t.TempDir(), "cua.db")}
	b.db, b.broker = openBroker(t, b.path, b.clock)
	return b
}

func openBroker(t *testing.T, path string, c *clock) (*sqlite.DB, *hitl.Broker) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, store.Config{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var n atomic.Int64
	br, err := hitl.NewBroker(hitl.BrokerConfig{
		Queue: hitlstore.New(db), Now: c.Now, HoldTTL: time.Minute,
		Redact: func(s string) string { return strings.ReplaceAll(s, "4111-1111", "[REDACTED]") },
		NewID:  func() string { return fmt.Sprintf("w%d", n.Add(1)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, br
}

func (b *brokerBundle) escalate(t *testing.T, session string) *hitl.Lease {
	t.Helper()
	l := hitl.NewLeaseAt("automation:"+session, b.clock.Now)
	w := hitl.Waiting{SessionID: session, RunID: session, Capability: "bank.transfer@1.0.0", Step: "confirm",
		FailureCode: domain.CodeUnexpectedState, Summary: "card 4111-1111 shows an undeclared dialog",
		Effects: &domain.Effects{Steps: []domain.StepEffect{{Step: "submit", Risk: domain.RiskElevated, Effect: domain.EffectNotSent}}}}
	if _, err := b.broker.Escalate(b.ctx, l, "automation:"+session, 1, w); err != nil {
		t.Fatalf("Escalate(%s): %v", session, err)
	}
	return l
}

func TestBrokerEscalateLists(t *testing.T) {
	t.Parallel()
	b := setupBroker(t)
	l := b.escalate(t, "s1")
	if st := l.Status(); st.State != hitl.StatePaused || st.Epoch != 2 {
		t.Fatalf("lease after escalate = %+v, want PAUSED at epoch 2", st)
	}
	rows, err := b.broker.List(b.ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("List = %+v, %v", rows, err)
	}
	w := rows[0]
	if w.Step != "confirm" || w.FailureCode != domain.CodeUnexpectedState || w.Status != hitl.WaitOpen ||
		w.Effects == nil || len(w.Effects.Steps) != 1 || w.Lease == nil || w.Lease.State != hitl.StatePaused {
		t.Fatalf("row = %+v", w)
	}
	if strings.Contains(w.Summary, "4111") || !strings.Contains(w.Summary, "[REDACTED]") {
		t.Fatalf("summary %q was not redacted before it was queued", w.Summary)
	}
	if _, err := b.broker.Escalate(b.ctx, l, "automation:s1", 2, hitl.Waiting{SessionID: "s1"}); err == nil {
		t.Fatal("a second escalation of a waiting session succeeded")
	}
}

// TestBrokerClaimRace: N operators claim one session at once through the
// broker; exactly one wins, the rest get a conflict, and the queue row
// names the winner.
func TestBrokerClaimRace(t *testing.T) {
	t.Parallel()
	b := setupBroker(t)
	b.escalate(t, "s1")
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = b.broker.Claim(b.ctx, "s1", fmt.Sprintf("op%d", i))
		})
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil:
			if winner != "" {
				t.Fatalf("both %s and op%d won", winner, i)
			}
			winner = fmt.Sprintf("op%d", i)
		case !errors.Is(err, hitl.ErrConflict):
			t.Fatalf("op%d: err = %v, want a conflict", i, err)
		}
	}
	if winner == "" {
		t.Fatal("no claim won")
	}
	rows, err := b.broker.List(b.ctx)
	if err != nil || len(rows) != 1 || rows[0].Status != hitl.WaitClaimed || rows[0].ClaimedBy != winner {
		t.Fatalf("List = %+v, %v; want claimed by %s", rows, err, winner)
	}
}

func TestBrokerReleaseResume(t *testing.T) {
	t.Parallel()
	b := setupBroker(t)
	l := b.escalate(t, "s1")
	if _, err := b.broker.Resume(b.ctx, "s1", "bob"); err != nil {
		t.Fatalf("resume of a paused session: %v", err)
	}
	// The session is gone from the queue once resumed; a fresh one runs the cycle.
	if rows, _ := b.broker.List(b.ctx); len(rows) != 0 {
		t.Fatalf("a resumed session is still listed: %+v", rows)
	}
	if _, err := l.Run("automation:s1"); err != nil {
		t.Fatal(err)
	}
	l2 := b.escalate(t, "s2")
	st, err := b.broker.Claim(b.ctx, "s2", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.broker.Resume(b.ctx, "s2", "alice"); !errors.Is(err, hitl.ErrConflict) {
		t.Fatalf("resume under a hold: %v, want a conflict", err)
	}
	if _, err := b.broker.Release(b.ctx, "s2", "alice", st.Epoch-1); !errors.Is(err, hitl.ErrConflict) {
		t.Fatalf("release at a stale epoch: %v, want a conflict", err)
	}
	if _, err := b.broker.Release(b.ctx, "s2", "alice", st.Epoch); err != nil {
		t.Fatalf("release: %v", err)
	}
	rows, _ := b.broker.List(b.ctx)
	if len(rows) != 1 || rows[0].Status != hitl.WaitOpen || rows[0].ClaimedBy != "" {
		t.Fatalf("after release: %+v, want the row open again", rows)
	}
	woke := make(chan hitl.Status, 1)
	go func() {
		st, _ := hitl.WaitResume(b.ctx, l2)
		woke <- st
	}()
	rs, err := b.broker.Resume(b.ctx, "s2", "alice")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-woke:
		if st.State != hitl.StateResuming || st.Epoch != rs.Epoch {
			t.Fatalf("WaitResume = %+v, want RESUMING at %d", st, rs.Epoch)
		}
	case <-time.After(60 * time.Second): // only a lost wake-up waits this long
		t.Fatal("the parked run did not wake on resume")
	}
	if _, err := b.broker.Claim(b.ctx, "s2", "bob"); !errors.Is(err, hitl.ErrUnknownSession) {
		t.Fatalf("claim of a resumed session: %v, want ErrUnknownSession", err)
	}
}

// TestBrokerExpiry: an abandoned claim lapses back to PAUSED, the queue
// row reopens, the old holder can no longer act, and another operator may
// claim.
func TestBrokerExpiry(t *testing.T) {
	t.Parallel()
	b := setupBroker(t)
	l := b.escalate(t, "s1")
	st, err := b.broker.Claim(b.ctx, "s1", "alice")
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(59 * time.Second)
	b.broker.Sweep(b.ctx)
	if got := l.Status(); got.State != hitl.StateHumanControl {
		t.Fatalf("hold lapsed before its ttl: %+v", got)
	}
	b.clock.Advance(time.Second)
	b.broker.Sweep(b.ctx)
	if got := l.Status(); got.State != hitl.StatePaused || got.Epoch != st.Epoch+1 {
		t.Fatalf("after the ttl: %+v, want PAUSED at epoch %d", got, st.Epoch+1)
	}
	if err := l.Check("human:alice", st.Epoch); domain.ErrorCode(err) != domain.CodeLeaseLost {
		t.Fatalf("expired holder may still act: %v", err)
	}
	rows, _ := b.broker.List(b.ctx)
	if len(rows) != 1 || rows[0].Status != hitl.WaitOpen {
		t.Fatalf("queue after expiry = %+v, want open", rows)
	}
	if _, err := b.broker.Claim(b.ctx, "s1", "bob"); err != nil {
		t.Fatalf("claim after expiry: %v", err)
	}
}

// TestBrokerRestartStillLists: a console restarted mid-wait (a new broker
// over the same database file) still lists the waiting session, without a
// live lease.
func TestBrokerRestartStillLists(t *testing.T) {
	t.Parallel()
	b := setupBroker(t)
	b.escalate(t, "s1")
	if err := b.db.Close(); err != nil {
		t.Fatal(err)
	}
	_, br := openBroker(t, b.path, b.clock)
	rows, err := br.List(b.ctx)
	if err != nil || len(rows) != 1 || rows[0].SessionID != "s1" || rows[0].Step != "confirm" || rows[0].Lease != nil {
		t.Fatalf("List after restart = %+v, %v; want s1 waiting at confirm with no live lease", rows, err)
	}
	if _, err := br.Claim(b.ctx, "s1", "alice"); !errors.Is(err, hitl.ErrUnknownSession) {
		t.Fatalf("claim of a session not live here: %v, want ErrUnknownSession", err)
	}
}
