package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/store"
)

const (
	examples = "../../examples/capabilities"
	lookup   = "memberdesk.savings_balance@1.2.0"
	transfer = "memberdesk.transfer_funds@1.3.0"
)

// fakeRunner stands in for pipeline.Replay: it indexes the run through the
// gate as a real run does, then ends it as its script says.
type fakeRunner struct {
	mu    sync.Mutex
	calls []string
	// die, when it returns true for a run, returns an error after the
	// run was indexed and before it ended: a worker dying mid-run.
	die func(runID string) bool
	// dieAfterEnd, when it returns true for a run, returns an error after
	// the run ended in the index: a worker dying before River recorded
	// the job complete.
	dieAfterEnd func(runID string) bool
	n           atomic.Int32
	// inputs are the inputs each run was given, by run id.
	inputs map[string]map[string]string
	// refs are the capability id@version each run was given, by run id.
	refs map[string]string
	// fail, when it returns true for a run, ends it FAILED
	// TARGET_NOT_FOUND instead of SUCCESS.
	fail func(runID string) bool
}

func (f *fakeRunner) Run(ctx context.Context, r jobs.Request) (*domain.RunRecord, error) {
	f.mu.Lock()
	f.calls = append(f.calls, r.RunID)
	if f.inputs == nil {
		f.inputs = map[string]map[string]string{}
	}
	f.inputs[r.RunID] = r.Inputs
	if f.refs == nil {
		f.refs = map[string]string{}
	}
	f.refs[r.RunID] = r.Capability.Capability.Ref()
	f.mu.Unlock()
	f.n.Add(1)
	in := map[string]any{}
	for k, v := range r.Inputs {
		in[k] = v
	}
	if _, _, err := r.Gate.Begin(ctx, r.RunID, r.Capability, in, ""); err != nil {
		return nil, err
	}
	if f.die != nil && f.die(r.RunID) {
		return nil, errors.New("session lost")
	}
	rec := &domain.RunRecord{RunID: r.RunID, Capability: r.Capability.Capability.Ref(), ContentHash: r.Capability.Hash, Status: domain.StatusSuccess,
		Outputs: map[string]any{"member": r.Inputs["member_id"]}, StartedAt: time.Now().Format(time.RFC3339Nano)}
	if f.fail != nil && f.fail(r.RunID) {
		rec.Status, rec.FailureCode, rec.Outputs = domain.StatusFailed, domain.CodeTargetNotFound, nil
	}
	if err := r.Gate.End(ctx, rec); err != nil {
		return nil, err
	}
	if f.dieAfterEnd != nil && f.dieAfterEnd(r.RunID) {
		return nil, errors.New("worker lost after the run ended")
	}
	return rec, nil
}

type testBundle struct {
	q   *jobs.Queue
	st  store.Store
	cat *catalog.Catalog
	run *fakeRunner
	dir string // the data directory: queue.db, cua.db
}

func setup(t *testing.T, run *fakeRunner) *testBundle { return setupWith(t, run, nil, false) }

// setupWith is setup with a worker resolving secret references from sec
// and, with check, a queue that checks every submitted run against the
// catalog (as every command's queue does).
func setupWith(t *testing.T, run *fakeRunner, sec jobs.SecretSource, check bool) *testBundle {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, f := range []string{examples + "/memberdesk.savings_balance.yaml", examples + "/memberdesk.transfer_funds.yaml", examples + "/memberdesk.transfer_history.yaml",
		examples + "/corebank.auth.sign_on.yaml", signOnAsFile} {
		if _, err := cat.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	cfg := jobs.Config{SQLitePath: filepath.Join(dir, "queue.db"), Workers: 2,
		Worker: jobs.NewWorker(cat, st, sec, run, nil), PollInterval: 50 * time.Millisecond, Keys: st}
	if check {
		cfg.Capabilities = cat
	}
	q, err := jobs.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(sctx)
		q.Close()
	})
	return &testBundle{q: q, st: st, cat: cat, run: run, dir: dir}
}

func (b *testBundle) wait(t *testing.T, j *jobs.Job) *jobs.Job {
	t.Helper()
	// Only a hang waits this long: a job here ends in well under a second.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	got, err := b.q.Wait(ctx, j.ID, 20*time.Millisecond)
	if err != nil {
		t.Fatalf("wait job %d: %v", j.ID, err)
	}
	return got
}

func args(ref, member, key string) jobs.RunArgs {
	return jobs.RunArgs{Ref: ref, BaseURL: "http://127.0.0.1:1", IdempotencyKey: key,
		Inputs: map[string]string{"member_id": member, "from_account": "Savings", "to_account": "Checking", "amount": "1.00"}}
}

func TestQueue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args jobs.RunArgs
		die  func(string) bool
		// want is the final River state, status the run's, calls how
		// many attempts reached the runner.
		want, status string
		needsHuman   bool
		calls        int32
	}{
		{name: "a lookup completes with its outputs", args: args(lookup, "12345", ""),
			want: "completed", status: "SUCCESS", calls: 1},
		{name: "a lookup that dies mid-run is retried: it sent nothing", args: args(lookup, "12345", ""),
			die: func(id string) bool { return id[len(id)-3:] == "-a1" }, want: "completed", status: "SUCCESS", calls: 2},
		{name: "a transfer that dies mid-run goes to a human, never back to the queue", args: args(transfer, "12345", ""),
			die: func(string) bool { return true }, want: "cancelled", status: "NEEDS_HUMAN", needsHuman: true, calls: 1},
		{name: "a pinned hash that does not match is refused before any run", args: func() jobs.RunArgs {
			a := args(lookup, "12345", "")
			a.ContentHash = "sha256:0000"
			return a
		}(), want: "cancelled", status: "FAILED", calls: 0},
		{name: "an unknown capability is refused", args: args("nope@1.0.0", "12345", ""),
			want: "cancelled", status: "FAILED", calls: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, &fakeRunner{die: tt.die})
			j, err := b.q.Submit(context.Background(), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			got := b.wait(t, j)
			if got.State != tt.want || got.Result == nil || string(got.Result.Status) != tt.status ||
				got.Result.NeedsHuman != tt.needsHuman || b.run.n.Load() != tt.calls {
				t.Fatalf("job: state %s result %+v after %d runs; want %s %s needs_human=%v after %d", got.State, got.Result,
					b.run.n.Load(), tt.want, tt.status, tt.needsHuman, tt.calls)
			}
			ivs, err := b.st.ListInterventions(context.Background(), store.InterventionFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.needsHuman != (len(ivs) == 1) || (tt.needsHuman && ivs[0].RunID != jobs.RunID(j.ID, 1)) {
				t.Fatalf("interventions %+v, want one for the first attempt: %v", ivs, tt.needsHuman)
			}
		})
	}
}

// An idempotency key makes a second submit return the first job, and the
// run happens once.
func TestSubmitIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t, &fakeRunner{})
	ctx := context.Background()
	first, err := b.q.Submit(ctx, args(lookup, "12345", "row-1"))
	if err != nil {
		t.Fatal(err)
	}
	b.wait(t, first)
	again, err := b.q.Submit(ctx, args(lookup, "12345", "row-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.ID != first.ID || b.run.n.Load() != 1 {
		t.Fatalf("second submit: id %d duplicate %v after %d runs; want job %d, duplicate, 1 run", again.ID, again.Duplicate, b.run.n.Load(), first.ID)
	}
	list, err := b.q.List(ctx, jobs.ListParams{State: "completed"})
	if err != nil || len(list) != 1 || list[0].ID != first.ID {
		t.Fatalf("list: %v %+v", err, list)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, field string
		mutate      func(*jobs.RunArgs)
	}{
		{"no ref", "ref", func(a *jobs.RunArgs) { a.Ref = " " }},
		{"bad hash", "content_hash", func(a *jobs.RunArgs) { a.ContentHash = "md5:1" }},
		{"priority", "priority", func(a *jobs.RunArgs) { a.Priority = 9 }},
		{"no base url", "base_url", func(a *jobs.RunArgs) { a.BaseURL = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := args(lookup, "12345", "")
			tt.mutate(&a)
			if err := a.Validate(); err == nil || err.Error()[:len(tt.field)] != tt.field {
				t.Fatalf("Validate: %v, want an error naming %s", err, tt.field)
			}
		})
	}
	if err := (jobs.ListParams{State: "done"}).Validate(); err == nil {
		t.Fatal("an unknown state is accepted")
	}
}

// A batch runs one job per row and writes one result per row; run again
// after losing part of its results file (a crash before they were
// written), it reads the finished jobs back instead of running them: three
// rows from what the file kept, three from the keys the store holds.
func TestBatchResumes(t *testing.T) {
	t.Parallel()
	b := setup(t, &fakeRunner{})
	dir := t.TempDir()
	in := filepath.Join(dir, "members.csv")
	csv := "member_id\n"
	for i := range 6 {
		csv += fmt.Sprintf("1234%d\n", i)
	}
	if err := os.WriteFile(in, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	rows, err := jobs.ReadRows(in)
	if err != nil || len(rows) != 6 {
		t.Fatalf("rows: %v %d", err, len(rows))
	}
	out := filepath.Join(dir, "results.jsonl")
	var ticks int
	p := jobs.BatchParams{Args: jobs.RunArgs{Ref: lookup, BaseURL: "http://127.0.0.1:1"}, Rows: rows, Out: out,
		Progress: func(jobs.Progress) { ticks++ }, Tick: 20 * time.Millisecond}
	pr, err := b.q.RunBatch(context.Background(), p)
	if err != nil || pr.Done != 6 || ticks == 0 {
		t.Fatalf("batch: %v %+v after %d progress calls", err, pr, ticks)
	}
	data, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 6 || !strings.Contains(lines[5], `"member":"12345"`) {
		t.Fatalf("results file:\n%s", data)
	}
	// Lose the last two results and tear the one before.
	kept := strings.Join(lines[:3], "\n") + "\n" + lines[3][:10]
	if err := os.WriteFile(out, []byte(kept), 0o600); err != nil {
		t.Fatal(err)
	}
	pr, err = b.q.RunBatch(context.Background(), p)
	if err != nil || pr.Done != 6 || pr.Skipped != 6 || b.run.n.Load() != 6 {
		t.Fatalf("second batch: %v %+v after %d runs; want 6 done, 6 already done, still 6 runs", err, pr, b.run.n.Load())
	}
	data, _ = os.ReadFile(out)
	if n := strings.Count(string(data), "\n"); n != 6 {
		t.Fatalf("results after resume: %d lines\n%s", n, data)
	}
}

// TestReadRows reads batch files: CSV and JSON Lines, a sensitive input as
// a secret reference ("$secret:REF" cell, {"$secret": "REF"} value), and
// the errors that name the line or column.
func TestReadRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name, file, body, err string
		want                  []jobs.Row
	}{
		{name: "csv", file: "a.csv", body: "member_id,note\n12345,x\n23456,y\n",
			want: []jobs.Row{{N: 1, Inputs: in("member_id", "12345", "note", "x")}, {N: 2, Inputs: in("member_id", "23456", "note", "y")}}},
		{name: "jsonl", file: "a.jsonl", body: "{\"member_id\":\"12345\"}\n\n{\"member_id\":23456}\n",
			want: []jobs.Row{{N: 1, Inputs: in("member_id", "12345")}, {N: 2, Inputs: in("member_id", "23456")}}},
		{name: "csv secret reference", file: "s.csv", body: "operator,note\n $secret:teller_operator ,x\n",
			want: []jobs.Row{{N: 1, Inputs: in("note", "x"), Secrets: in("operator", "teller_operator")}}},
		{name: "jsonl secret reference", file: "s.jsonl", body: `{"operator":{"$secret":"teller_operator"},"note":"x"}` + "\n",
			want: []jobs.Row{{N: 1, Inputs: in("note", "x"), Secrets: in("operator", "teller_operator")}}},
		{name: "jsonl object value", file: "b.jsonl", body: "{\"member_id\":{}}\n", err: "line 1: input \"member_id\""},
		{name: "jsonl object that is not a reference", file: "t.jsonl", body: `{"operator":{"$secret":"a","b":1}}` + "\n",
			err: `line 1: input "operator": an object must be a secret reference`},
		{name: "csv empty header", file: "b.csv", body: "member_id,\n1,2\n", err: "column 2 has no name"},
		{name: "other extension", file: "a.txt", body: "x", err: "want a .csv or .jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.file)
			if err := os.WriteFile(p, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			rows, err := jobs.ReadRows(p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(rows, tt.want) {
				t.Fatalf("rows %+v err %v; want %+v", rows, err, tt.want)
			}
		})
	}
}
