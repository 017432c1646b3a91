package hitlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/pgtest"
	"github.com/cuahq/cua/internal/store/postgres"
	"github.com/cuahq/cua/internal/store/sqlite"
)

var pg *pgtest.Server

func TestMain(m *testing.M) {
	s, err := pgtest.Start(context.Background())
	if err != nil {
		// No skip: without PostgreSQL the suite fails.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pg = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}

// TestQueue runs the queue on both adapters: a row keeps why the session
// waits across a reopen of the database, and status conflicts come back
// as hitl.ErrQueueConflict.
func TestQueue(t *testing.T) {
	t.Parallel()
	adapters := []struct {
		name string
		open func(t *testing.T) func() store.Store
	}{
		{"sqlite", func(t *testing.T) func() store.Store {
			path := filepath.Join(t.TempDir(), "cua.db")
			return func() store.Store {
				db, err := sqlite.Open(t.Context(), path, store.Config{})
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
		}},
		{"postgres", func(t *testing.T) func() store.Store {
			dsn := pg.Fresh(t)
			return func() store.Store {
				db, err := postgres.Open(t.Context(), dsn, store.Config{})
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
		}},
	}
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			open := a.open(t)
			st := open()
			q := hitlstore.New(st)
			at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			for i, s := range []string{"s2", "s1"} {
				w := hitl.Waiting{ID: "w-" + s, SessionID: s, RunID: "r-" + s, Capability: "bank.transfer@1.0.0",
					Step: "confirm", FailureCode: domain.CodeTargetNotFound, Summary: "no Confirm button",
					Effects: &domain.Effects{Sent: true, Steps: []domain.StepEffect{{Step: "submit", Risk: domain.RiskElevated, Effect: domain.EffectConfirmed}}},
					Inputs:  map[string]string{"amount": "25.00", "to": "[masked]"}, Screen: "Confirm transfer",
					Relay: "http://127.0.0.1:40001", CreatedAt: at.Add(time.Duration(i) * time.Second)}
				if err := q.Put(ctx, w); err != nil {
					t.Fatal(err)
				}
			}
			if err := q.Claim(ctx, "w-s1", "alice"); err != nil {
				t.Fatal(err)
			}
			if err := q.Claim(ctx, "w-s1", "bob"); !errors.Is(err, hitl.ErrQueueConflict) {
				t.Fatalf("second claim: %v, want ErrQueueConflict", err)
			}
			if err := q.Release(ctx, "w-s1", "bob"); !errors.Is(err, hitl.ErrQueueConflict) {
				t.Fatalf("release by another: %v, want ErrQueueConflict", err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st = open()
			defer st.Close()
			q = hitlstore.New(st)
			rows, err := q.Pending(ctx)
			if err != nil || len(rows) != 2 {
				t.Fatalf("Pending after reopen = %+v, %v", rows, err)
			}
			if rows[0].SessionID != "s2" || rows[1].SessionID != "s1" || rows[1].Status != hitl.WaitClaimed ||
				rows[1].ClaimedBy != "alice" || rows[1].Effects == nil || !rows[1].Effects.Sent || rows[1].Step != "confirm" ||
				rows[1].Inputs["to"] != "[masked]" || rows[1].Screen != "Confirm transfer" || rows[1].Relay != "http://127.0.0.1:40001" {
				t.Fatalf("Pending after reopen = %+v", rows)
			}
			if err := q.Resolve(ctx, "w-s2", "resumed"); err != nil {
				t.Fatal(err)
			}
			if err := q.Resolve(ctx, "w-s2", "again"); !errors.Is(err, hitl.ErrQueueConflict) {
				t.Fatalf("resolve twice: %v, want ErrQueueConflict", err)
			}
			if rows, _ := q.Pending(ctx); len(rows) != 1 || rows[0].SessionID != "s1" {
				t.Fatalf("Pending after resolve = %+v", rows)
			}
			// A row a worker queued when its run ended has only a reason:
			// the queue shows it as why.
			if _, err := st.EnqueueIntervention(ctx, store.Intervention{ID: "iv-j1-a1", SessionID: "j1-a1", Reason: "an undeclared dialog"}); err != nil {
				t.Fatal(err)
			}
			if rows, _ := q.Pending(ctx); len(rows) != 2 || rows[1].Summary != "an undeclared dialog" || rows[1].Relay != "" {
				t.Fatalf("Pending with a worker's row = %+v", rows)
			}
		})
	}
}
