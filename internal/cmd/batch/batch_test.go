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
	args := append([]string{"batch", "memberdesk.savings_balance@1.1.0", "--inputs", in, "--out", out, "--sessions", "2",
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
	if !strings.Contains(string(res), fmt.Sprintf("(%d already done)", before)) {
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
// marked for a human and in the intervention queue; the ledger holds one.
func TestTransferKilledAfterConfirm(t *testing.T) {
	w := setup(t)
	w.cua(t, "catalog", "approve", "memberdesk.transfer_funds@1.1.0", "--approver", "test", "--once", "--input", "member_id=12345",
		"--input", "from_account=Savings", "--input", "to_account=Checking", "--input", "amount=25.00")
	ctx := context.Background()
	// The survey dialog after the post holds the run on screen, so the
	// kill lands after the effect and before the run ends.
	if err := w.ctl.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		t.Fatal(err)
	}
	// The transfer signs on and posts in Chromium: on CI's loaded cores that
	// can take longer than a tight job timeout, which would retry it.
	worker := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", "120s", "--rescue-after", "121s"}, w.allow...)...)
	var logs syncBuffer
	worker.Stderr = &logs
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	sub := w.cua(t, append([]string{"submit", "memberdesk.transfer_funds@1.1.0", "--json", "-i", "member_id=12345",
		"-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=25.00", "--unattended",
		"--release-gate", "submit"}, w.base...)...)
	var j jobs.Job
	if err := json.Unmarshal([]byte(sub), &j); err != nil {
		t.Fatalf("submit: %v\n%s", err, sub)
	}
	deadline := time.Now().Add(150 * time.Second)
	for {
		l, err := w.ctl.Ledger(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) > 0 {
			break
		}
		if time.Now().After(deadline) {
			worker.Process.Kill()
			t.Fatalf("no ledger entry in 150s; worker:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = worker.Process.Signal(syscall.SIGKILL)
	_ = worker.Wait()

	// The killed attempt is rescued once it has been running past
	// --rescue-after; this worker's own attempt runs no browser (the first
	// one sent an effect), so 20 s is only a bound on a hang.
	next := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", "20s", "--rescue-after", "21s"}, w.allow...)...)
	next.Stderr = &logs
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Process.Signal(syscall.SIGTERM); _ = next.Wait() }()
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(w.dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	wctx, cancel := context.WithTimeout(ctx, 180*time.Second)
	defer cancel()
	got, err := q.Wait(wctx, j.ID, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("wait: %v; worker:\n%s", err, logs.String())
	}
	if got.State != "cancelled" || got.Result == nil || !got.Result.NeedsHuman || got.Result.FailureCode != domain.CodeEffectUnknown {
		t.Fatalf("job %+v result %+v; want cancelled, needs_human, EFFECT_UNKNOWN", got, got.Result)
	}
	_, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: w.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ivs, err := st.ListInterventions(ctx, store.InterventionFilter{})
	if err != nil || len(ivs) != 1 || ivs[0].RunID != jobs.RunID(j.ID, 1) {
		t.Fatalf("interventions %+v %v; want one for run %s", ivs, err, jobs.RunID(j.ID, 1))
	}
	if l, err := w.ctl.Ledger(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ledger %d entries (%v), want 1", len(l), err)
	}
}
