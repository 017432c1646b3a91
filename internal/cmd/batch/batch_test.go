package batchcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/pgtest"
)

const examples = "../../../examples/capabilities"

var bin string

// TestMain builds the real cua binary once: the tests kill it mid-batch.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cua-batch-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "cua")
	build := exec.Command("go", "build", "-o", bin, "../../../cmd/cua")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build cua:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is one MemberDesk and one data dir with the example capabilities
// in its catalog.
type world struct {
	app  *mockapp.Server
	ctl  *mockapp.Client
	dir  string
	db   string
	env  []string
	base []string // flags every queue command takes
	// allow is what every command that works runs (worker, batch with
	// sessions, serve with workers) takes: --allow-origin for the app (the
	// example capabilities name bare hosts, which admit no origin).
	allow []string
}

func setup(t *testing.T) *world { return setupDB(t, "") }

// setupDB is setup on the store at db (empty: SQLite in the data dir).
func setupDB(t *testing.T, db string) *world {
	t.Helper()
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	dir := t.TempDir()
	w := &world{app: app, ctl: mockapp.NewClient(app.URL(), nil), dir: dir, db: db,
		env: append(os.Environ(), "CUA_DATA_DIR="+dir, "CUA_DB="+db, "CUA_SECRET_COREBANK_OPERATOR=OP1001",
			"CUA_SECRET_COREBANK_PASSWORD=teller-pass-1"),
		base: []string{"--base-url", app.URL()}, allow: []string{"--allow-origin", app.URL()}}
	abs, err := filepath.Abs(examples)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(abs, "*.yaml"))
	w.cua(t, append([]string{"catalog", "add"}, files...)...)
	return w
}

func (w *world) command(args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Env, c.Dir = w.env, w.dir
	return c
}

func (w *world) cua(t *testing.T, args ...string) string {
	t.Helper()
	out, err := w.command(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cua %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// endedRuns counts, per job, the indexed runs that ended with an answer
// (SUCCESS or a business outcome: a run done). An attempt that timed out
// having sent nothing ends FAILED and is retried by design; it is not a
// second completion.
func (w *world) endedRuns(t *testing.T) map[string]int {
	t.Helper()
	_, st, err := launch.Catalog(context.Background(), launch.StoreOptions{DB: w.db, DataDir: w.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListRuns(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range runs {
		job, _, _ := strings.Cut(r.ID, "-a")
		if !r.EndedAt.IsZero() && (r.Status == domain.StatusSuccess || r.Status == domain.StatusBusinessOutcome) {
			out[job]++
		}
	}
	return out
}

// runsTable lists the indexed runs, for a failure message.
func (w *world) runsTable(t *testing.T) string {
	t.Helper()
	_, st, err := launch.Catalog(context.Background(), launch.StoreOptions{DB: w.db, DataDir: w.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return err.Error()
	}
	defer st.Close()
	runs, err := st.ListRuns(context.Background(), store.RunFilter{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, r := range runs {
		d := "running"
		if !r.EndedAt.IsZero() {
			d = r.EndedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "%s %s %s %s\n", r.ID, r.Status, r.FailureCode, d)
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// syncBuffer collects a pseudo-terminal's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A batch of 50 lookups in a pseudo-terminal draws its progress bar, is
// SIGKILLed part way, and run again finishes only the rows not done: 50
// results, every row's run done exactly once.
func TestBatchKilledAndResumed(t *testing.T) {
	w := setup(t)
	members := []string{"12345", "23456", "34567", "45678", "56789"}
	csv := "member_id\n"
	for i := range 50 {
		csv += members[i%len(members)] + "\n"
	}
	in, out := filepath.Join(w.dir, "members.csv"), filepath.Join(w.dir, "results.jsonl")
	if err := os.WriteFile(in, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"batch", "memberdesk.savings_balance@1.2.0", "--inputs", in, "--out", out, "--sessions", "2",
		"--job-timeout", "60s", "--rescue-after", "61s"}, append(w.base, w.allow...)...)
	first := w.command(args...)
	tty, err := pty.Start(first)
	if err != nil {
		t.Fatal(err)
	}
	screen := &syncBuffer{}
	go func() { _, _ = io.Copy(screen, tty) }()
	start := time.Now()
	// Generous limits: on CI's 2 cores this test shares the machine with
	// every other package's browsers, and a run there can take 20 s.
	for len(lines(t, out)) < 8 {
		if time.Since(start) > 300*time.Second {
			first.Process.Kill()
			t.Fatalf("no 8 results in 300s; runs:\n%s\nterminal (tail):\n%s", w.runsTable(t), tail(screen.String(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	firstRate := float64(len(lines(t, out))) / time.Since(start).Seconds()
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	tty.Close()
	before := len(lines(t, out))
	shown := screen.String()
	if !strings.Contains(shown, "\r\x1b[K[#") || !strings.Contains(shown, "needs-human") || !strings.Contains(shown, "ETA") {
		t.Fatalf("the terminal shows no progress bar:\n%q", shown)
	}

	resumed := time.Now()
	res, err := w.command(args...).CombinedOutput()
	if err != nil {
		t.Errorf("re-run: %v\n%s", err, res)
	}
	t.Logf("first run %.1f rows/s; killed with %d results; resume took %s: %s", firstRate, before, time.Since(resumed).Round(time.Millisecond), strings.TrimSpace(string(res)))
	// The store decides what is done: at least the rows on file, and
	// any row whose run ended before the kill but missed the file.
	var done int
	if _, err := fmt.Sscanf(string(res[strings.LastIndex(string(res), "(")+1:]), "%d already done", &done); err != nil || done < before {
		t.Errorf("the re-run did not resume from the %d results on file:\n%s", before, res)
	}
	got := lines(t, out)
	if len(got) != 50 {
		t.Fatalf("%d results, want 50", len(got))
	}
	rows := map[int]bool{}
	for _, l := range got {
		var r jobs.RowResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != domain.StatusSuccess && r.Status != domain.StatusBusinessOutcome {
			t.Errorf("row %d: %s %s (job %d, run %s)", r.Row, r.Status, r.FailureCode, r.JobID, r.RunID)
		}
		rows[r.Row] = true
	}
	ended := w.endedRuns(t)
	if len(rows) != 50 || len(ended) != 50 {
		t.Fatalf("%d distinct rows, %d jobs with an ended run; want 50 each", len(rows), len(ended))
	}
	for job, n := range ended {
		if n != 1 {
			t.Errorf("job %s ran to the end %d times", job, n)
		}
	}
}

// A transfer whose worker is SIGKILLed after its Confirm dispatch (the
// ledger has its entry) is not retried by the next worker: it is cancelled,
// marked for a human and in the intervention queue, its run ABANDONED; the
// ledger holds one. Its idempotency key stays bound: the same key again
// posts nothing and names the first run, another amount is refused; only
// `cua interventions resolve --not-landed` lets one more attempt run (the
// ledger then holds two), and the key is bound to that one. On SQLite and on
// a real PostgreSQL.
func TestTransferKilledAfterConfirm(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { transferKilledAfterConfirm(t, setup(t)) })
	t.Run("postgres", func(t *testing.T) {
		ctx := context.Background()
		pg, err := pgtest.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Stop)
		if _, err := pg.CreateDatabase(ctx, "transfer"); err != nil {
			t.Fatal(err)
		}
		transferKilledAfterConfirm(t, setupDB(t, pg.URL("transfer")))
	})
}

// transferSteps are what the halves of transferKilledAfterConfirm share.
type transferSteps struct {
	submit  func(amount string, extra ...string) (string, error)
	approve func()
	start   func(timeout, rescue string) *exec.Cmd
	wait    func(id int64) *jobs.Job
	logs    *syncBuffer
}

// keyStaysBound is the second half of transferKilledAfterConfirm: the key
// of the killed transfer's job, whose intervention is iv, after the rescue.
func keyStaysBound(t *testing.T, w *world, ts transferSteps, iv string, jobID int64) {
	ctx := context.Background()
	first := jobs.RunID(jobID, 1)
	submit, approve, wait, logs := ts.submit, ts.approve, ts.wait, ts.logs
	// The same key again: no new job, no ledger entry, the first run named.
	again, err := submit("25.00")
	if err != nil || !strings.Contains(again, `"duplicate": true`) || !strings.Contains(again, `"run_id": "`+first+`"`) {
		t.Fatalf("the same key after the intervention: %v\n%s", err, again)
	}
	text, _ := w.command(append([]string{"submit", "memberdesk.transfer_funds@1.3.0", "-i", "member_id=12345",
		"-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=25.00", "--unattended",
		"--release-gate", "submit", "--idempotency-key", "pay-12345-1"}, w.base...)...).CombinedOutput()
	if !strings.Contains(string(text), "already ran as run "+first+" at ") {
		t.Fatalf("the text answer does not say it already ran:\n%s", text)
	}
	other, err := w.command(append([]string{"submit", "memberdesk.transfer_funds@1.3.0", "-i", "member_id=12345",
		"-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=300.00", "--unattended",
		"--release-gate", "submit", "--idempotency-key", "pay-12345-1"}, w.base...)...).CombinedOutput()
	if err == nil || !strings.Contains(string(other), "inputs.amount differ") || strings.Contains(string(other), "300.00") {
		t.Fatalf("the same key with another amount: %v\n%s", err, other)
	}
	if l, err := w.ctl.Ledger(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ledger %d entries (%v), want 1", len(l), err)
	}

	// A person checks the ledger and says the transfer did not land (the
	// test says so to prove the release; the ledger here says otherwise).
	shown := w.cua(t, "interventions", "show", iv)
	for _, want := range []string{"memberdesk.transfer_funds@1.3.0", first + " (ABANDONED)", "input amount", "25.00", "pay-12345-1"} {
		if !strings.Contains(shown, want) {
			t.Fatalf("interventions show lacks %q:\n%s", want, shown)
		}
	}
	if out, err := w.command("interventions", "resolve", iv).CombinedOutput(); err == nil || !strings.Contains(string(out), "--landed") {
		t.Fatalf("resolve without a verdict: %v\n%s", err, out)
	}
	res := w.cua(t, "interventions", "resolve", iv, "--not-landed", "--note", "checked the ledger")
	if !strings.Contains(res, "resolved (not landed)") || !strings.Contains(res, " (unverified)") {
		t.Fatalf("resolve:\n%s", res)
	}
	approve()
	third := ts.start("120s", "121s")
	defer func() { _ = third.Process.Signal(syscall.SIGTERM); _ = third.Wait() }()
	sub, err := submit("25.00")
	var retry jobs.Job
	if err != nil || json.Unmarshal([]byte(sub), &retry) != nil || retry.Duplicate || retry.ID == jobID {
		t.Fatalf("the submit after not landed: %v\n%s", err, sub)
	}
	if got := wait(retry.ID); got.State != "completed" || got.Result == nil || got.Result.Status != domain.StatusSuccess {
		t.Fatalf("the new attempt: %+v %+v; worker:\n%s", got, got.Result, logs.String())
	}
	if l, err := w.ctl.Ledger(ctx); err != nil || len(l) != 2 {
		t.Fatalf("ledger %d entries (%v), want 2: one per person's release", len(l), err)
	}
	last, err := submit("25.00")
	if err != nil || !strings.Contains(last, `"duplicate": true`) || !strings.Contains(last, `"run_id": "`+jobs.RunID(retry.ID, 1)+`"`) {
		t.Fatalf("the key after the new attempt: %v\n%s", err, last)
	}
	if l, _ := w.ctl.Ledger(ctx); len(l) != 2 {
		t.Fatalf("ledger %d entries after a third submit, want 2", len(l))
	}
}

func transferKilledAfterConfirm(t *testing.T, w *world) {
	approve := func() {
		w.cua(t, "catalog", "approve", "memberdesk.transfer_funds@1.3.0", "--once", "--input", "member_id=12345",
			"--input", "from_account=Savings", "--input", "to_account=Checking", "--input", "amount=25.00")
	}
	approve()
	ctx := context.Background()
	// The survey dialog after the post holds the run on screen, so the
	// kill lands after the effect and before the run ends.
	if err := w.ctl.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		t.Fatal(err)
	}
	// The transfer signs on and posts in Chromium: on CI's loaded cores that
	// can take longer than a tight job timeout, which would retry it.
	var logs syncBuffer
	startWorker := func(timeout, rescue string) *exec.Cmd {
		c := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", timeout, "--rescue-after", rescue}, w.allow...)...)
		c.Stderr = &logs
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	worker := startWorker("120s", "121s")
	submit := func(amount string, extra ...string) (string, error) {
		out, err := w.command(append(append([]string{"submit", "memberdesk.transfer_funds@1.3.0", "--json", "-i", "member_id=12345",
			"-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=" + amount, "--unattended",
			"--release-gate", "submit", "--idempotency-key", "pay-12345-1"}, w.base...), extra...)...).Output()
		return string(out), err
	}
	sub, err := submit("25.00")
	var j jobs.Job
	if err != nil || json.Unmarshal([]byte(sub), &j) != nil {
		t.Fatalf("submit: %v\n%s", err, sub)
	}
	waitLedger := func(n int) {
		t.Helper()
		deadline := time.Now().Add(150 * time.Second)
		for {
			l, err := w.ctl.Ledger(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(l) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %d ledger entries in 150s; worker:\n%s", n, logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitLedger(1)
	_ = worker.Process.Signal(syscall.SIGKILL)
	_ = worker.Wait()

	// The killed attempt is rescued once it has been running past
	// --rescue-after; this worker's own attempt runs no browser (the first
	// one sent an effect), so 20 s is only a bound on a hang.
	next := startWorker("20s", "21s")
	q, err := jobs.Open(ctx, jobs.Config{DB: w.db, SQLitePath: jobs.QueuePath(w.dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	wait := func(id int64) *jobs.Job {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 180*time.Second)
		defer cancel()
		got, err := q.Wait(wctx, id, 100*time.Millisecond)
		if err != nil {
			t.Fatalf("wait: %v; worker:\n%s", err, logs.String())
		}
		return got
	}
	got := wait(j.ID)
	if got.State != "cancelled" || got.Result == nil || !got.Result.NeedsHuman || got.Result.FailureCode != domain.CodeEffectUnknown {
		t.Fatalf("job %+v result %+v; want cancelled, needs_human, EFFECT_UNKNOWN", got, got.Result)
	}
	_ = next.Process.Signal(syscall.SIGTERM)
	_ = next.Wait()
	_, st, err := launch.Catalog(ctx, launch.StoreOptions{DB: w.db, DataDir: w.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ivs, err := st.ListInterventions(ctx, store.InterventionFilter{})
	first := jobs.RunID(j.ID, 1)
	if err != nil || len(ivs) != 1 || ivs[0].RunID != first {
		t.Fatalf("interventions %+v %v; want one for run %s", ivs, err, first)
	}
	if runs, err := st.ListRuns(ctx, store.RunFilter{Status: domain.StatusRunning}); err != nil || len(runs) != 0 {
		t.Fatalf("RUNNING rows after the rescue: %+v %v; want none (the killed attempt is ABANDONED)", runs, err)
	}
	if r, err := st.GetRun(ctx, first); err != nil || r.Status != domain.StatusAbandoned {
		t.Fatalf("the killed attempt's run: %+v %v; want ABANDONED", r, err)
	}

	keyStaysBound(t, w, transferSteps{submit: submit, approve: approve, start: startWorker, wait: wait, logs: &logs},
		ivs[0].ID, j.ID)

}
