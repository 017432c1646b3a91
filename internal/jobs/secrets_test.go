package jobs_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/secret"

	_ "modernc.org/sqlite" // reads the queue file as an operator would
)

const (
	// signOnAsFile is a test capability whose operator id is a sensitive
	// input (the real-browser run is in internal/cmd/batch's tests).
	signOnAsFile = "testdata/test.sign_on_as.yaml"
	signOnAs     = "test.sign_on_as@1.0.0"
	// operatorID is the sensitive value: it must never be in the queue.
	operatorID = "OP1001"
)

// tellerSecrets is a real secret store holding the operator id under the
// reference "teller_operator", as CUA_SECRET_TELLER_OPERATOR would.
func tellerSecrets(t *testing.T) *secret.Store {
	t.Helper()
	sec, err := secret.NewStore(func(k string) string {
		return map[string]string{"CUA_SECRET_TELLER_OPERATOR": operatorID}[k]
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func countJobs(t *testing.T, q *jobs.Queue) int {
	t.Helper()
	js, err := q.List(context.Background(), jobs.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return len(js)
}

// Every run the queue refuses is refused before anything is inserted,
// with an error naming the field and the input and never the value.
func TestSubmitRefusesSensitiveValues(t *testing.T) {
	t.Parallel()
	b := setupWith(t, &fakeRunner{}, tellerSecrets(t), true)
	base := func(ref string) jobs.RunArgs { return jobs.RunArgs{Ref: ref, BaseURL: "http://127.0.0.1:1"} }
	tests := []struct {
		name   string
		args   jobs.RunArgs
		inputs map[string]string
		refs   map[string]string
		want   []string // in the error
	}{
		{name: "a sensitive input given as a value", args: base(signOnAs), inputs: map[string]string{"operator": operatorID},
			want: []string{"inputs.operator:", `input "operator"`, "is sensitive", "--input-secret operator=REF", "input_secrets"}},
		{name: "a reference for an input that is not sensitive", args: base(lookup), refs: map[string]string{"member_id": "teller_operator"},
			want: []string{"input_secrets.member_id:", "not sensitive"}},
		{name: "a reference for an input the capability does not declare", args: base(signOnAs), refs: map[string]string{"pin": "teller_pin"},
			want: []string{"input_secrets.pin:", `declares no input "pin"`}},
		{name: "an input given both ways", args: base(signOnAs), inputs: map[string]string{"operator": operatorID},
			refs: map[string]string{"operator": "teller_operator"}, want: []string{"input_secrets.operator:", "both"}},
		{name: "a reference that is not one (a value pasted by mistake)", args: base(signOnAs),
			refs: map[string]string{"operator": operatorID}, want: []string{"input_secrets.operator:", "not a secret reference"}},
		{name: "a capability the catalog does not hold", args: base("nope@1.0.0"), inputs: map[string]string{"pin": operatorID},
			want: []string{"ref:", "not in the catalog"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.args
			a.Inputs, a.InputSecrets = tt.inputs, tt.refs
			_, err := b.q.Submit(context.Background(), a)
			if !errors.Is(err, jobs.ErrRefused) {
				t.Fatalf("submit: %v, want a refusal", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), operatorID) {
				t.Errorf("error %q holds the value", err)
			}
		})
	}
	if n := countJobs(t, b.q); n != 0 {
		t.Fatalf("%d jobs inserted by refused submits", n)
	}
}

// A batch with one row giving a sensitive value queues none of its rows.
func TestBatchRefusesSensitiveValues(t *testing.T) {
	t.Parallel()
	b := setupWith(t, &fakeRunner{}, tellerSecrets(t), true)
	dir := t.TempDir()
	in := filepath.Join(dir, "tellers.csv")
	if err := os.WriteFile(in, []byte("operator\n$secret:teller_operator\n"+operatorID+"\n$secret:teller_operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rows, err := jobs.ReadRows(in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.q.RunBatch(context.Background(), jobs.BatchParams{Args: jobs.RunArgs{Ref: signOnAs, BaseURL: "http://127.0.0.1:1"},
		Rows: rows, Out: filepath.Join(dir, "results.jsonl")})
	if !errors.Is(err, jobs.ErrRefused) || !strings.Contains(err.Error(), "row 2: inputs.operator:") || strings.Contains(err.Error(), operatorID) {
		t.Fatalf("batch: %v, want row 2's operator refused", err)
	}
	if n := countJobs(t, b.q); n != 0 {
		t.Fatalf("%d jobs inserted by a refused batch", n)
	}
}

// A reference is what the queue holds: the job's arguments (as the API
// and River's UI show them, and as River's table stores them) name the
// reference and never the value; the worker resolves it and the run gets
// the value.
func TestSecretReferenceResolvedByWorker(t *testing.T) {
	t.Parallel()
	run := &fakeRunner{}
	b := setupWith(t, run, tellerSecrets(t), true)
	a := jobs.RunArgs{Ref: signOnAs, BaseURL: "http://127.0.0.1:1", IdempotencyKey: "k1",
		InputSecrets: map[string]string{"operator": "teller_operator"}}
	j, err := b.q.Submit(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	got := b.wait(t, j)
	if got.State != "completed" || got.Result == nil || got.Result.Status != domain.StatusSuccess {
		t.Fatalf("job: %s %+v", got.State, got.Result)
	}
	run.mu.Lock()
	given := run.inputs[jobs.RunID(j.ID, 1)]["operator"]
	run.mu.Unlock()
	if given != operatorID {
		t.Fatalf("the run was given operator %q, want the resolved secret", given)
	}
	if got.Args.InputSecrets["operator"] != "teller_operator" || got.Args.Inputs["operator"] != "" {
		t.Fatalf("job args %+v, want the reference only", got.Args)
	}
	again, err := b.q.Submit(context.Background(), a)
	if err != nil || !again.Duplicate || again.ID != j.ID {
		t.Fatalf("resubmit with the same key: %v %+v, want the first job", err, again)
	}
	rows := riverArgs(t, filepath.Join(b.dir, "queue.db"))
	if len(rows) != 1 || !strings.Contains(rows[0], `"input_secrets":{"operator":"teller_operator"}`) || strings.Contains(rows[0], operatorID) {
		t.Fatalf("river_job args %q: want the reference and not the value", rows)
	}
}

// riverArgs reads every job's stored arguments straight from River's
// table in the queue's SQLite file (River stores JSONB; json() reads it).
func riverArgs(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.Query(`SELECT json(args) FROM river_job`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The worker ends a job whose reference its store cannot resolve with
// SECRET_UNAVAILABLE, once: never retried, never run. It also refuses,
// unrun, a sensitive value that reached the queue without the submit
// check (an old client writing River's table itself).
func TestWorkerRefusesUnresolvableInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   jobs.RunArgs
		code   domain.FailureCode
		reason string
	}{
		{name: "a secret the worker's store does not hold",
			args: jobs.RunArgs{Ref: signOnAs, BaseURL: "http://127.0.0.1:1", InputSecrets: map[string]string{"operator": "other_operator"}},
			code: domain.CodeSecretUnavailable, reason: `input_secrets.operator: secret "other_operator" is not set (CUA_SECRET_OTHER_OPERATOR`},
		{name: "a sensitive value that bypassed the submit check",
			args: jobs.RunArgs{Ref: signOnAs, BaseURL: "http://127.0.0.1:1", Inputs: map[string]string{"operator": operatorID}},
			code: domain.CodeInputInvalid, reason: "inputs.operator: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := &fakeRunner{}
			b := setupWith(t, run, tellerSecrets(t), false)
			j, err := b.q.Submit(context.Background(), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			got := b.wait(t, j)
			r := got.Result
			if got.State != "cancelled" || r == nil || r.Status != domain.StatusFailed || r.FailureCode != tt.code ||
				got.Attempt != 1 || run.n.Load() != 0 {
				t.Fatalf("job %s attempt %d result %+v after %d runs; want cancelled FAILED %s after 1 attempt and no run",
					got.State, got.Attempt, r, run.n.Load(), tt.code)
			}
			if !strings.Contains(r.Message, tt.reason) || strings.Contains(r.Message, operatorID) {
				t.Fatalf("message %q: want %q and never the value", r.Message, tt.reason)
			}
		})
	}
}

// A row's secret reference, never a value, is part of its idempotency
// key: two references make two keys.
func TestRowKeyHoldsTheReference(t *testing.T) {
	t.Parallel()
	one := jobs.Row{N: 1, Inputs: map[string]string{"note": "x"}, Secrets: map[string]string{"operator": "teller_operator"}}
	two := one
	two.Secrets = map[string]string{"operator": "teller_two"}
	if jobs.RowKey(signOnAs, "http://127.0.0.1:1", one) == jobs.RowKey(signOnAs, "http://127.0.0.1:1", two) {
		t.Fatal("two references share a row key")
	}
}
