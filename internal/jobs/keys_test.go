package jobs_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/store"
)

// A transfer whose worker died mid-run goes to a person; its key stays
// bound whatever became of the job: the same key again runs nothing and
// names the first run, the same key with another amount is refused naming
// the input, and only a "not landed" verdict lets exactly one new job take
// it.
func TestKeyBindsForEver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := &fakeRunner{die: func(id string) bool { return strings.HasPrefix(id, "j1-") }}
	b := setupWith(t, run, nil, true)
	a := args(transfer, "12345", "pay-1")
	first, err := b.q.Submit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.wait(t, first); got.State != "cancelled" || got.Result == nil || !got.Result.NeedsHuman {
		t.Fatalf("first job: %s %+v; want cancelled, handed to a person", got.State, got.Result)
	}
	if r, err := b.st.GetRun(ctx, jobs.RunID(first.ID, 1)); err != nil || r.Status != domain.StatusAbandoned || r.EndedAt.IsZero() {
		t.Fatalf("the dead attempt in the run index: %+v, %v; want ABANDONED with an end time", r, err)
	}

	again, err := b.q.Submit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.ID != first.ID || again.AlreadyRan == nil || again.AlreadyRan.RunID != jobs.RunID(first.ID, 1) ||
		!strings.Contains(again.AlreadyRan.String(), "already ran as run "+jobs.RunID(first.ID, 1)+" at ") {
		t.Fatalf("same key after the intervention: %+v (already ran %+v); want the first job and its run", again, again.AlreadyRan)
	}
	if n := run.n.Load(); n != 1 {
		t.Fatalf("%d runs reached the runner, want 1", n)
	}

	other := a
	other.Inputs = map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "300.00"}
	_, err = b.q.Submit(ctx, other)
	var kc *jobs.KeyConflictError
	if !errors.As(err, &kc) || !errors.Is(err, jobs.ErrRefused) || strings.Join(kc.Fields, ",") != "inputs.amount" ||
		strings.Contains(err.Error(), "300.00") || strings.Contains(err.Error(), "1.00") {
		t.Fatalf("same key, other amount: %v; want a refusal naming inputs.amount and no value", err)
	}
	moved := a
	moved.BaseURL = "http://127.0.0.1:2"
	if _, err := b.q.Submit(ctx, moved); !errors.As(err, &kc) || strings.Join(kc.Fields, ",") != "base_url" {
		t.Fatalf("same key, another application: %v; want a refusal naming base_url", err)
	}

	ivs, err := b.q.Interventions(ctx, "open")
	if err != nil || len(ivs) != 1 {
		t.Fatalf("open interventions: %+v, %v", ivs, err)
	}
	iv := ivs[0]
	if iv.JobID != first.ID || iv.Capability != transfer || iv.IdempotencyKey != "pay-1" || iv.Inputs["amount"] != "1.00" ||
		iv.RunStatus != domain.StatusAbandoned || iv.Why == "" {
		t.Fatalf("intervention view: %+v", iv)
	}
	if _, err := b.q.ResolveIntervention(ctx, iv.ID, jobs.Resolution{Verdict: "perhaps", By: "cli:alice"}); !errors.Is(err, jobs.ErrRefused) ||
		!strings.HasPrefix(err.Error(), "verdict:") {
		t.Fatalf("a bad verdict: %v; want a refusal naming verdict", err)
	}
	res, err := b.q.ResolveIntervention(ctx, iv.ID, jobs.Resolution{Verdict: store.VerdictNotLanded, By: "cli:alice", Note: "no ledger entry"})
	if err != nil || res.Status != "resolved" || res.ResolvedBy != "cli:alice" || res.Verdict != store.VerdictNotLanded || res.Note != "no ledger entry" {
		t.Fatalf("resolve: %+v, %v", res, err)
	}
	if _, err := b.q.ResolveIntervention(ctx, iv.ID, jobs.Resolution{Verdict: store.VerdictLanded, By: "cli:bob"}); !errors.Is(err, jobs.ErrRefused) {
		t.Fatalf("resolving twice: %v; want a refusal", err)
	}

	retry, err := b.q.Submit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if retry.Duplicate || retry.ID == first.ID {
		t.Fatalf("after not landed: %+v; want a new job", retry)
	}
	if got := b.wait(t, retry); got.State != "completed" || got.Result.Status != domain.StatusSuccess {
		t.Fatalf("the new attempt: %s %+v", got.State, got.Result)
	}
	third, err := b.q.Submit(ctx, a)
	if err != nil || !third.Duplicate || third.ID != retry.ID || third.AlreadyRan == nil || third.AlreadyRan.RunID != jobs.RunID(retry.ID, 1) {
		t.Fatalf("after the new attempt ran: %+v, %v; want its job again", third, err)
	}
	if n := run.n.Load(); n != 2 {
		t.Fatalf("%d runs reached the runner, want 2 (one per person's release)", n)
	}
}

// A key bound to a job that never ran (cancelled while queued) is free:
// nothing happened under it, so the next submit queues a new job.
func TestKeyOfJobThatNeverRan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupWith(t, &fakeRunner{}, nil, true)
	// A client with no workers: its jobs wait until cancelled.
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: filepath.Join(t.TempDir(), "queue.db"), Capabilities: b.cat, Keys: b.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	a := args(transfer, "12345", "pay-2")
	j, err := q.Submit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if dup, err := q.Submit(ctx, a); err != nil || !dup.Duplicate || dup.ID != j.ID || dup.AlreadyRan == nil ||
		dup.AlreadyRan.RunID != "" || !strings.Contains(dup.AlreadyRan.String(), "already submitted as job") {
		t.Fatalf("same key while queued: %+v, %v; want the queued job", dup, err)
	}
	if _, err := q.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	next, err := q.Submit(ctx, a)
	if err != nil || next.Duplicate || next.ID == j.ID {
		t.Fatalf("after the queued job was cancelled: %+v, %v; want a new job", next, err)
	}
	k, err := b.st.GetJobKey(ctx, "memberdesk.transfer_funds", "pay-2")
	if err != nil || k.JobID != next.ID || k.Generation != 1 {
		t.Fatalf("binding: %+v, %v; want job %d at generation 1", k, err, next.ID)
	}
}

// The worker that finished a run and died before River recorded the job
// complete: the next attempt takes that run's result and never runs again.
func TestFinishedAttemptIsTheResult(t *testing.T) {
	t.Parallel()
	run := &fakeRunner{dieAfterEnd: func(id string) bool { return strings.HasSuffix(id, "-a1") }}
	b := setupWith(t, run, nil, true)
	j, err := b.q.Submit(context.Background(), args(transfer, "12345", ""))
	if err != nil {
		t.Fatal(err)
	}
	got := b.wait(t, j)
	if got.State != "completed" || got.Result == nil || got.Result.Status != domain.StatusSuccess ||
		got.Result.RunID != jobs.RunID(j.ID, 1) || got.Result.Outputs["member"] != "12345" || run.n.Load() != 1 {
		t.Fatalf("job: %s %+v after %d runs; want the first run's SUCCESS and outputs, 1 run", got.State, got.Result, run.n.Load())
	}
}

// Inputs are checked against the capability before anything is queued:
// names match exactly, an unknown one is refused, values keep their spec.
func TestSubmitChecksInputs(t *testing.T) {
	t.Parallel()
	b := setupWith(t, &fakeRunner{}, nil, true)
	tests := []struct {
		name, field string
		mutate      func(a *jobs.RunArgs)
	}{
		{"near-miss name", "inputs.AMOUNT", func(a *jobs.RunArgs) { a.Inputs["AMOUNT"] = a.Inputs["amount"]; delete(a.Inputs, "amount") }},
		{"unknown name", "inputs.note", func(a *jobs.RunArgs) { a.Inputs["note"] = "x" }},
		{"bad pattern", "inputs.member_id", func(a *jobs.RunArgs) { a.Inputs["member_id"] = "12" }},
		{"bad enum", "inputs.to_account", func(a *jobs.RunArgs) { a.Inputs["to_account"] = "Brokerage" }},
		{"over the maximum", "inputs.amount", func(a *jobs.RunArgs) { a.Inputs["amount"] = "20000.00" }},
		{"missing", "inputs.member_id", func(a *jobs.RunArgs) { delete(a.Inputs, "member_id") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := args(transfer, "12345", "")
			tt.mutate(&a)
			_, err := b.q.Submit(context.Background(), a)
			if !errors.Is(err, jobs.ErrRefused) || !strings.HasPrefix(err.Error(), tt.field+":") {
				t.Fatalf("Submit: %v; want a refusal starting %q", err, tt.field)
			}
		})
	}
	list, err := b.q.List(context.Background(), jobs.ListParams{})
	if err != nil || len(list) != 0 {
		t.Fatalf("the queue after refusals: %d jobs, %v; want none", len(list), err)
	}
}
