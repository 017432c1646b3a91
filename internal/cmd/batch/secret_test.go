package batchcmd_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"

	_ "modernc.org/sqlite" // reads the queue file as an operator would
)

// operatorID is MemberDesk's operator id: the test capability takes it as
// a sensitive input, and the world's environment holds it as the secret
// corebank_operator (CUA_SECRET_COREBANK_OPERATOR).
const operatorID = "OP1001"

const signOnAs = "test.sign_on_as@1.0.0"

// TestSensitiveInputThroughQueue drives the real binary: `cua submit`,
// `cua batch` and `cua serve`'s API refuse a sensitive input given as a value and queue nothing;
// given as a secret reference, a batch row signs on to MemberDesk in real
// Chromium (the value typed into the form), and a row whose secret the
// worker lacks ends SECRET_UNAVAILABLE after one attempt. Then no file in
// the data directory (River's queue, the store, every run's evidence) and
// nothing the commands printed holds the value.
func TestSensitiveInputThroughQueue(t *testing.T) {
	w := setup(t)
	capFile, err := filepath.Abs("../../jobs/testdata/test.sign_on_as.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w.cua(t, "catalog", "add", capFile)
	var printed strings.Builder

	// Refused, before anything is queued.
	inputs := t.TempDir() // outside the data directory: bad.csv holds the value
	bad := filepath.Join(inputs, "bad.csv")
	if err := os.WriteFile(bad, []byte("operator\n$secret:corebank_operator\n"+operatorID+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"submit", []string{"submit", signOnAs, "-i", "operator=" + operatorID}, "inputs.operator: "},
		{"batch", []string{"batch", signOnAs, "--inputs", bad, "--sessions", "0", "--out", filepath.Join(inputs, "r.jsonl")},
			"row 2: inputs.operator: "},
	} {
		out, err := w.command(append(tt.args, w.base...)...).CombinedOutput()
		printed.Write(out)
		if err == nil || !strings.Contains(string(out), tt.want) || !strings.Contains(string(out), "--input-secret operator=REF") {
			t.Errorf("%s: %v\n%s\nwant a refusal naming %q and saying how to pass a reference", tt.name, err, out, tt.want)
		}
	}
	status, body := w.serveSubmit(t, `{"ref":"`+signOnAs+`","base_url":"http://127.0.0.1:1","inputs":{"operator":"`+operatorID+`"}}`)
	printed.WriteString(body)
	if status != 400 || !strings.Contains(body, `"field":"inputs.operator"`) {
		t.Errorf("cua serve's API: %d %s, want 400 naming inputs.operator", status, body)
	}
	if n := len(w.queued(t)); n != 0 {
		t.Fatalf("%d jobs queued by refused commands", n)
	}

	// A reference the worker holds, and one it does not.
	rows := filepath.Join(inputs, "tellers.jsonl")
	rowsBody := `{"operator":{"$secret":"corebank_operator"}}` + "\n" + `{"operator":{"$secret":"absent_operator"}}` + "\n"
	if err := os.WriteFile(rows, []byte(rowsBody), 0o600); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(inputs, "results.jsonl")
	out, err := w.command(append([]string{"batch", signOnAs, "--inputs", rows, "--out", results, "--sessions", "1"}, append(w.base, w.allow...)...)...).CombinedOutput()
	printed.Write(out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("batch: %v, want exit 1 (one row failed)\n%s", err, out)
	}
	got := lines(t, results)
	if len(got) != 2 {
		t.Fatalf("results:\n%s", strings.Join(got, "\n"))
	}
	var ok, missing jobs.RowResult
	if json.Unmarshal([]byte(got[0]), &ok) != nil || json.Unmarshal([]byte(got[1]), &missing) != nil {
		t.Fatalf("results:\n%s", strings.Join(got, "\n"))
	}
	if ok.Status != domain.StatusSuccess || ok.RunID == "" {
		t.Errorf("row 1: %+v, want a SUCCESS run (signed on)\n%s", ok, out)
	}
	if missing.Status != domain.StatusFailed || missing.FailureCode != domain.CodeSecretUnavailable || missing.State != "cancelled" {
		t.Errorf("row 2: %+v, want FAILED SECRET_UNAVAILABLE, cancelled", missing)
	}

	// cua submit takes the reference and shows only it.
	sub := w.cua(t, append([]string{"submit", signOnAs, "--json", "--input-secret", "operator=corebank_operator"}, w.base...)...)
	printed.WriteString(sub)
	if !strings.Contains(sub, `"input_secrets": {`) && !strings.Contains(sub, `"input_secrets":{`) {
		t.Errorf("submit --json shows no reference:\n%s", sub)
	}

	jobsQueued := w.queued(t)
	if len(jobsQueued) != 3 {
		t.Fatalf("%d jobs in the queue, want 3", len(jobsQueued))
	}
	for _, a := range jobsQueued {
		if !strings.Contains(a, `"input_secrets":{"operator":"`) {
			t.Errorf("stored args %s: no reference", a)
		}
	}
	for _, j := range []jobs.RowResult{ok, missing} {
		if a := w.attempts(t, j.JobID); a != 1 {
			t.Errorf("job %d: %d attempts, want 1", j.JobID, a)
		}
	}
	if strings.Contains(printed.String(), operatorID) {
		t.Errorf("the commands printed the value:\n%s", printed.String())
	}
	w.noValueOnDisk(t, operatorID)
}

// serveSubmit starts `cua serve` with no workers (its queue checks runs
// against the catalog as every command's does) and flags, posts one run
// and returns the answer's status and body.
func (w *world) serveSubmit(t *testing.T, run string, flags ...string) (int, string) {
	t.Helper()
	srv := w.command(append([]string{"serve", "--addr", "127.0.0.1:0", "--workers", "0", "--token", "tok"}, flags...)...)
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	sc := bufio.NewScanner(stderr)
	var url string
	for url == "" && sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if url == "" {
		t.Fatalf("cua serve printed no address: %v", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	req, err := http.NewRequest("POST", url+"/v1/runs", strings.NewReader(run))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// queued reads every job's arguments from River's table in the queue file
// (River stores JSONB; json() turns it back into text).
func (w *world) queued(t *testing.T) []string {
	t.Helper()
	var out []string
	w.queueQuery(t, `SELECT json(args) FROM river_job ORDER BY id`, func(rs *sql.Rows) error {
		var s string
		err := rs.Scan(&s)
		out = append(out, s)
		return err
	})
	return out
}

// attempts is how many times a worker took job id.
func (w *world) attempts(t *testing.T, id int64) int {
	t.Helper()
	n := -1
	w.queueQuery(t, `SELECT attempt FROM river_job WHERE id = ?`, func(rs *sql.Rows) error { return rs.Scan(&n) }, id)
	return n
}

func (w *world) queueQuery(t *testing.T, q string, row func(*sql.Rows) error, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+jobs.QueuePath(w.dir)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := row(rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
}

// noValueOnDisk fails when any file under the data directory (queue, WAL,
// store, evidence bundles, logs) holds v, and when no run's evidence was
// written at all.
func (w *world) noValueOnDisk(t *testing.T, v string) {
	t.Helper()
	var files, bundles int
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if strings.HasSuffix(p, "events.jsonl") {
			bundles++
		}
		if bytes.Contains(data, []byte(v)) {
			t.Errorf("%s holds the sensitive value", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if bundles == 0 {
		t.Fatalf("no evidence bundle among %d files under %s", files, w.dir)
	}
	t.Logf("%d files under the data directory, %d evidence bundles: none holds the value", files, bundles)
}
