package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/store"
)

// The queue stage's batch: one lookup a row, and what each must answer
// (savings_balance, or the business outcome of a member that does not
// exist).
var fleetRows = []struct{ member, want string }{
	{"12345", "1234.56"}, {"23456", "0.00"}, {"56789", "12345678.90"}, {"99999", "member_not_found"},
	{"12345", "1234.56"}, {"23456", "0.00"}, {"56789", "12345678.90"}, {"12345", "1234.56"},
}

// The fleet's timeouts: short, so the killed worker's row is rescued within
// a demo (up to fleetRescue and River's 30s rescuer interval after its
// attempt began). A lookup takes a few seconds.
const (
	fleetTimeout = "45s"
	fleetRescue  = "46s"
	fleetWait    = 6 * time.Minute
)

// searchPath is the route of MemberDesk's member search a lookup posts.
const searchPath = "/content/search"

// fleet is one queue stage: its data directory and the processes it runs.
type fleet struct {
	e     *env
	dir   string
	procs []*proc
}

// proc is a process the stage started; done is closed once it exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// exited reports whether p has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// fleetStage is the queue's side of the story, on the real binary: `cua
// batch --sessions 0` queues fleetRows in a fresh data directory under
// <data-dir>/demo, a first `cua worker` takes a row (MemberDesk holds its
// first answers, so it is mid-run), a second starts and the first is
// SIGKILLed. River rescues the killed row after --rescue-after and the
// survivor runs it. It passes when the batch exits 0 with every row in its
// results file once with the right answer, the store holds exactly one
// answered run per job, the killed row's job took a second attempt,
// MemberDesk's searches exceed the rows by no more than the reruns, and
// every answered run's bundle verifies share_ready.
func (e *env) fleetStage(ctx context.Context) *Result {
	r := &Result{Stage: Stage{Name: "queue batch, a worker killed mid-batch", Capability: lookupCap, WantDispatches: -1}}
	f, err := e.newFleet()
	if err != nil {
		return r.fail("%v", err)
	}
	defer f.stop()
	ctx, cancel := context.WithTimeout(ctx, fleetWait)
	defer cancel()
	rescueWait, err := f.run(ctx)
	if err != nil {
		return r.fail("%v", err)
	}
	detail, err := f.check(ctx)
	if err != nil {
		return r.fail("%v (worker logs under %s)", err, f.dir)
	}
	r.Pass = true
	r.Detail = fmt.Sprintf("%s; the killed row rescued and rerun %s after its attempt began; %s",
		detail, rescueWait.Round(time.Second), ObserveCommand(f.dir))
	return r
}

// newFleet makes the queue stage's data directory, with the lookup in its
// catalog and the batch's rows.
func (e *env) newFleet() (*fleet, error) {
	f, err := e.fleetDir("fleet-", "corebank.auth.sign_on", lookupCap)
	if err != nil {
		return nil, err
	}
	var rows strings.Builder
	rows.WriteString("member_id\n")
	for _, row := range fleetRows {
		rows.WriteString(row.member + "\n")
	}
	if err := os.WriteFile(filepath.Join(f.dir, "rows.csv"), []byte(rows.String()), 0o600); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	return f, nil
}

// fleetDir makes a fresh data directory under <data-dir>/demo named
// prefix*, with the demo's signing key when it has one and the
// capabilities ids (files <id>.yaml of the capabilities directory) in its
// catalog.
func (e *env) fleetDir(prefix string, ids ...string) (*fleet, error) {
	parent := filepath.Join(e.cfg.DataDir, "demo")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err == nil {
		// The fleet's processes run in dir: a relative data dir (make
		// demo's .cua) would name another directory there.
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	f := &fleet{e: e, dir: dir}
	key := filepath.Join(e.cfg.DataDir, "keys", "signing.key")
	if _, err := os.Stat(key); err == nil {
		data, err := fsx.ReadFile(key, 1<<16)
		if err != nil {
			return nil, fmt.Errorf("fleet: signing key: %w", err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "keys", "signing.key"), data, 0o600); err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
	}
	caps, err := filepath.Abs(e.cfg.Capabilities)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	args := []string{"catalog", "add"}
	for _, id := range ids {
		args = append(args, filepath.Join(caps, id+".yaml"))
	}
	if _, err := f.cua(args...); err != nil {
		return nil, err
	}
	return f, nil
}

// cua runs one short command of the fleet and returns its stdout.
func (f *fleet) cua(args ...string) (string, error) {
	c := f.command(args...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("cua %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// command is the demo's binary with args, in the fleet's data directory,
// with the demo's sign-on secrets.
func (f *fleet) command(args ...string) *exec.Cmd {
	c := exec.Command(f.e.cfg.Bin, args...)
	c.Dir = f.dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUA_") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, "CUA_DATA_DIR="+f.dir, "CUA_SECRET_COREBANK_OPERATOR="+Operator, "CUA_SECRET_COREBANK_PASSWORD="+Password)
	if f.e.cfg.Browser != "" {
		c.Env = append(c.Env, "CUA_BROWSER="+f.e.cfg.Browser)
	}
	return c
}

// start starts a long-running command, its stderr in <dir>/<name>.log.
func (f *fleet) start(name string, args ...string) (*proc, error) {
	return f.startCmd(name, f.command(args...))
}

// startCmd starts c, its output in <dir>/<name>.log.
func (f *fleet) startCmd(name string, c *exec.Cmd) (*proc, error) {
	log, err := os.Create(filepath.Join(f.dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("fleet: start %s: %w", name, err)
	}
	p := &proc{cmd: c, done: make(chan struct{})}
	go func() { _ = c.Wait(); log.Close(); close(p.done) }()
	f.procs = append(f.procs, p)
	return p, nil
}

// stop kills every process the stage started that is still running.
func (f *fleet) stop() {
	for _, p := range f.procs {
		if !p.exited() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// run queues the batch, runs the two workers, kills the first mid-run and
// waits for the batch to end; it returns how long after the killed
// attempt began its row was answered.
func (f *fleet) run(ctx context.Context) (time.Duration, error) {
	app := f.e.app
	if err := app.Reset(ctx); err != nil {
		return 0, fmt.Errorf("reset mock app: %w", err)
	}
	// The first two content answers take 3 s each: the first worker's
	// first row is still running when it is killed.
	if err := app.Arm(ctx, mockapp.FaultSlow, 2, 0); err != nil {
		return 0, fmt.Errorf("arm fault: %w", err)
	}
	timing := []string{"--job-timeout", fleetTimeout, "--rescue-after", fleetRescue}
	batch, err := f.start("batch", append([]string{"batch", lookupCap + "@1.2.0", "--inputs", "rows.csv", "--out", "results.jsonl",
		"--sessions", "0", "--base-url", f.e.base}, timing...)...)
	if err != nil {
		return 0, err
	}
	worker := append([]string{"worker", "--workers", "1", "--allow-origin", f.e.base}, timing...)
	first, err := f.start("worker-1", worker...)
	if err != nil {
		return 0, err
	}
	killed, err := f.waitRunning(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := f.start("worker-2", worker...); err != nil {
		return 0, err
	}
	time.Sleep(time.Second)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill the first worker: %w", err)
	}
	select {
	case <-batch.done:
	case <-ctx.Done():
		return 0, fmt.Errorf("the batch did not end within %s (see %s)", fleetWait, filepath.Join(f.dir, "batch.log"))
	}
	if code := batch.cmd.ProcessState.ExitCode(); code != 0 {
		return 0, fmt.Errorf("cua batch exited %d, want 0 (see %s)", code, filepath.Join(f.dir, "batch.log"))
	}
	for _, p := range f.procs[2:] {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	}
	return time.Since(killed), nil
}

// waitRunning waits until the queue holds a running job and returns when.
func (f *fleet) waitRunning(ctx context.Context) (time.Time, error) {
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(f.dir)})
	for err != nil && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond) // the batch creates the queue
		q, err = jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(f.dir)})
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("open the fleet's queue: %w", err)
	}
	defer q.Close()
	for {
		js, err := q.List(ctx, jobs.ListParams{State: "running", Limit: 10})
		if err == nil && len(js) > 0 {
			return time.Now(), nil
		}
		if ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("no worker took a row: %v (see %s)", err, filepath.Join(f.dir, "worker-1.log"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check holds the batch to the stage's claims and summarizes them.
func (f *fleet) check(ctx context.Context) (string, error) {
	answered, err := f.checkResults()
	if err != nil {
		return "", err
	}
	_, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: f.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return "", err
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		return "", fmt.Errorf("list the fleet's runs: %w", err)
	}
	perJob := map[string]int{}
	rerun := 0
	for _, run := range runs {
		job, attempt, _ := strings.Cut(run.ID, "-a")
		if attempt != "1" {
			rerun++
		}
		if !run.EndedAt.IsZero() && (run.Status == domain.StatusSuccess || run.Status == domain.StatusBusinessOutcome) {
			perJob[job]++
		}
	}
	for job, n := range perJob {
		if n != 1 {
			return "", fmt.Errorf("job %s answered %d times in the store, want once", job, n)
		}
	}
	if len(perJob) != len(fleetRows) || rerun == 0 {
		return "", fmt.Errorf("the store holds %d answered jobs and %d reruns; want %d and the killed row's rerun", len(perJob), rerun, len(fleetRows))
	}
	state, err := f.e.app.State(ctx)
	if err != nil {
		return "", fmt.Errorf("read MemberDesk's state: %w", err)
	}
	searches := state.Posts[searchPath]
	if searches < len(fleetRows) || searches > len(fleetRows)+rerun {
		return "", fmt.Errorf("MemberDesk saw %d searches for %d rows and %d reruns", searches, len(fleetRows), rerun)
	}
	if err := f.verify(answered); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d rows answered once each (results file and store) by 2 workers, one SIGKILLed mid-run; "+
		"MemberDesk saw %d searches (%d rows, %d rerun); %d bundles share_ready",
		len(fleetRows), searches, len(fleetRows), rerun, len(answered)), nil
}

// checkResults reads results.jsonl: each row once, with its answer. It
// returns the answered run ids.
func (f *fleet) checkResults() ([]string, error) {
	file, err := fsx.Open(filepath.Join(f.dir, "results.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("results file: %w", err)
	}
	defer file.Close()
	seen := map[int]int{}
	var ids []string
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var res jobs.RowResult
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return nil, fmt.Errorf("results file: %w", err)
		}
		seen[res.Row]++
		if res.Row < 1 || res.Row > len(fleetRows) {
			return nil, fmt.Errorf("results file: row %d is not in the batch", res.Row)
		}
		want := fleetRows[res.Row-1].want
		got := res.Outcome
		if res.Status == domain.StatusSuccess {
			got = fmt.Sprint(res.Outputs["savings_balance"])
		}
		if got != want {
			return nil, fmt.Errorf("results file: row %d (member %s) answered %s %q, want %q", res.Row, fleetRows[res.Row-1].member, res.Status, got, want)
		}
		ids = append(ids, res.RunID)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("results file: %w", err)
	}
	for n := 1; n <= len(fleetRows); n++ {
		if seen[n] != 1 {
			return nil, fmt.Errorf("results file: row %d written %d times, want once", n, seen[n])
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// verify checks each answered run's bundle share_ready, with the fleet's
// signing key when it has one.
func (f *fleet) verify(ids []string) error {
	key, err := evidence.DeploymentKey(f.dir)
	if err != nil {
		return err
	}
	for _, id := range ids {
		rep := evidence.VerifyDeployment(filepath.Join(f.dir, "runs", id), key, []string{Operator, Password})
		if !rep.ShareReady {
			return fmt.Errorf("run %s is not share_ready: %s", id, strings.Join(rep.Reasons, "; "))
		}
	}
	return nil
}
