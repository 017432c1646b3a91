package storetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// Environment of a helper process.
const (
	envMode = "CUA_STORETEST_MODE" // "writer" or "kill"
	envAddr = "CUA_STORETEST_ADDR"
	envArg  = "CUA_STORETEST_ARG" // writer: process number; kill: the method to die in
)

// writerRounds is how many rounds each of the two writer processes runs.
const writerRounds = 30

// HelperMain runs this process as a helper of the suite when the suite
// started it, and exits; otherwise it returns at once. Adapters call it
// first in TestMain, before starting anything.
func HelperMain(h Harness) {
	mode := os.Getenv(envMode)
	if mode == "" {
		return
	}
	if err := helper(mode, h); err != nil {
		fmt.Fprintf(os.Stderr, "storetest helper %s: %v\n", mode, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helper(mode string, h Harness) error {
	ctx := context.Background()
	addr, arg := os.Getenv(envAddr), os.Getenv(envArg)
	switch mode {
	case "writer":
		st, err := h.Open(ctx, addr, store.Config{})
		if err != nil {
			return err
		}
		defer st.Close()
		return writer(ctx, st, arg)
	case "kill":
		cfg := store.Config{BeforeCommit: func(op string) {
			if op == arg {
				fmt.Println("IN_TX " + op)
				time.Sleep(time.Hour) // hold the transaction open until the parent kills us
			}
		}}
		st, err := h.Open(ctx, addr, cfg)
		if err != nil {
			return err
		}
		defer st.Close()
		return killWrite(ctx, st, arg)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// writerReport is what a writer process prints: the rounds it won.
type writerReport struct {
	Contested []int `json:"contested"`
	Consumed  []int `json:"consumed"`
	Keys      []int `json:"keys"`
}

// writer waits for "GO" on stdin, then runs the rounds of one process and
// prints a writerReport.
func writer(ctx context.Context, st store.Store, proc string) error {
	fmt.Println("READY")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("wait for GO: %w", err)
	}
	var rep writerReport
	for i := range writerRounds {
		shared := version(fmt.Sprintf("shared-%d", i), "1.0.0", "same")
		if _, _, err := st.AddVersion(ctx, shared); err != nil {
			return fmt.Errorf("round %d: add shared version: %w", i, err)
		}
		_, created, err := st.AddVersion(ctx, version(fmt.Sprintf("contested-%d", i), "1.0.0", "p"+proc))
		if err == nil && created {
			rep.Contested = append(rep.Contested, i)
		} else if !errors.Is(err, store.ErrImmutable) {
			return fmt.Errorf("round %d: add contested version: created %v, %w", i, created, err)
		}
		if _, err := st.AddApproval(ctx, approval(fmt.Sprintf("p%s-%d", proc, i), shared)); err != nil {
			return fmt.Errorf("round %d: add approval: %w", i, err)
		}
		runID := fmt.Sprintf("p%s-run-%d", proc, i)
		if _, err := st.ConsumeApproval(ctx, fmt.Sprintf("once-%d", i), runID); err == nil {
			rep.Consumed = append(rep.Consumed, i)
		} else if !errors.Is(err, store.ErrApprovalConsumed) {
			return fmt.Errorf("round %d: consume: %w", i, err)
		}
		r := run(runID, shared)
		r.IdempotencyKey = fmt.Sprintf("key-%d", i)
		if _, err := st.RecordRun(ctx, r); err == nil {
			rep.Keys = append(rep.Keys, i)
		} else if !errors.Is(err, store.ErrIdempotencyKeyClaimed) {
			return fmt.Errorf("round %d: record run: %w", i, err)
		}
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// child is a started helper process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

// startChild re-executes the test binary as a helper in mode.
func startChild(t *testing.T, mode, addr, arg string) *child {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envAddr+"="+addr, envArg+"="+arg)
	c := &child{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper %s: %v", mode, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return c
}

// line reads one line of the child's stdout.
func (c *child) line(t *testing.T) string {
	t.Helper()
	s, err := c.stdout.ReadString('\n')
	if err != nil {
		_ = c.cmd.Wait()
		t.Fatalf("helper stdout: %v (stderr: %s)", err, c.stderr)
	}
	return s[:len(s)-1]
}

func testTwoProcesses(t *testing.T, h Harness) {
	b := setup(t, h)
	base := mustAdd(t, b, version("base", "1.0.0", "a"))
	for i := range writerRounds {
		mustApprove(t, b, oneOff(fmt.Sprintf("once-%d", i), base))
	}
	kids := []*child{startChild(t, "writer", b.addr, "0"), startChild(t, "writer", b.addr, "1")}
	for _, k := range kids {
		if got := k.line(t); got != "READY" {
			t.Fatalf("helper said %q, want READY", got)
		}
	}
	for _, k := range kids {
		if _, err := io.WriteString(k.stdin, "GO\n"); err != nil {
			t.Fatal(err)
		}
	}
	reps := make([]writerReport, 2)
	for p, k := range kids {
		if err := json.Unmarshal([]byte(k.line(t)), &reps[p]); err != nil {
			t.Fatalf("writer %d report: %v", p, err)
		}
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v (stderr: %s)", p, err, k.stderr)
		}
	}
	checkTwoProcesses(t, b, reps)
}

// checkTwoProcesses checks that every round has exactly one winner of each
// contested write, that the store agrees with it, and that no approval was
// lost.
func checkTwoProcesses(t *testing.T, b bundle, reps []writerReport) {
	t.Helper()
	winners := func(pick func(writerReport) []int) map[int][]int {
		w := map[int][]int{}
		for p, r := range reps {
			for _, i := range pick(r) {
				w[i] = append(w[i], p)
			}
		}
		return w
	}
	contested := winners(func(r writerReport) []int { return r.Contested })
	consumed := winners(func(r writerReport) []int { return r.Consumed })
	keys := winners(func(r writerReport) []int { return r.Keys })
	for i := range writerRounds {
		if len(contested[i]) != 1 || len(consumed[i]) != 1 || len(keys[i]) != 1 {
			t.Fatalf("round %d winners: version %v, approval %v, key %v; want exactly one each",
				i, contested[i], consumed[i], keys[i])
		}
		v, err := b.st.GetVersion(b.ctx, fmt.Sprintf("contested-%d", i), "1.0.0")
		want := version(v.CapabilityID, "1.0.0", "p"+strconv.Itoa(contested[i][0]))
		if err != nil || v.ContentHash != want.ContentHash {
			t.Fatalf("contested-%d: %+v, %v; want the winner's hash %s", i, v, err, want.ContentHash)
		}
		a, err := b.st.GetApproval(b.ctx, fmt.Sprintf("once-%d", i))
		if wantRun := fmt.Sprintf("p%d-run-%d", consumed[i][0], i); err != nil || a.ConsumedBy != wantRun {
			t.Fatalf("once-%d consumed by %q (%v), want %s", i, a.ConsumedBy, err, wantRun)
		}
		owner, err := b.st.LookupIdempotencyKey(b.ctx, "shared-"+strconv.Itoa(i), "key-"+strconv.Itoa(i))
		if wantRun := fmt.Sprintf("p%d-run-%d", keys[i][0], i); err != nil || owner != wantRun {
			t.Fatalf("key-%d owned by %q (%v), want %s", i, owner, err, wantRun)
		}
		for p := range 2 {
			if _, err := b.st.GetApproval(b.ctx, fmt.Sprintf("p%d-%d", p, i)); err != nil {
				t.Fatalf("approval p%d-%d lost: %v", p, i, err)
			}
		}
	}
	vs, err := b.st.ListVersions(b.ctx, store.VersionFilter{})
	if err != nil || len(vs) != 1+2*writerRounds {
		t.Fatalf("%d versions (%v), want %d: one per id@version", len(vs), err, 1+2*writerRounds)
	}
}

// killWrite performs the write named op; the BeforeCommit hook stops it
// inside its transaction.
func killWrite(ctx context.Context, st store.Store, op string) error {
	var err error
	switch op {
	case "AddVersion":
		_, _, err = st.AddVersion(ctx, version("killed", "1.0.0", "k"))
	case "AddApproval":
		_, err = st.AddApproval(ctx, approval("killed-ap", version("base", "1.0.0", "a")))
	case "RecordRun":
		r := run("killed-run", version("base", "1.0.0", "a"))
		r.IdempotencyKey = "killed-key"
		_, err = st.RecordRun(ctx, r)
	default:
		return fmt.Errorf("unknown op %q", op)
	}
	if err != nil {
		return err
	}
	return errors.New(op + " committed; the hook did not stop it")
}

func testKillMidWrite(t *testing.T, h Harness) {
	for _, op := range []string{"AddVersion", "AddApproval", "RecordRun"} {
		t.Run(op, func(t *testing.T) {
			b := setup(t, h)
			base := mustAdd(t, b, version("base", "1.0.0", "a"))
			k := startChild(t, "kill", b.addr, op)
			if got := k.line(t); got != "IN_TX "+op {
				t.Fatalf("helper said %q, want IN_TX %s", got, op)
			}
			if err := k.cmd.Process.Signal(os.Kill); err != nil {
				t.Fatal(err)
			}
			_ = k.cmd.Wait()
			// A new handle, as after a crash: nothing of the write is
			// visible, and the same write now succeeds.
			after := setupAt(t, h, b.addr)
			ctx, cancel := context.WithTimeout(after.ctx, 60*time.Second) // only a hang meets it
			defer cancel()
			checkKilled(ctx, t, after.st, op, base)
		})
	}
}

// checkKilled checks that the killed write left nothing and can be redone.
func checkKilled(ctx context.Context, t *testing.T, st store.Store, op string, base store.Version) {
	t.Helper()
	switch op {
	case "AddVersion":
		if vs, err := st.ListVersions(ctx, store.VersionFilter{CapabilityID: "killed"}); err != nil || len(vs) != 0 {
			t.Fatalf("killed AddVersion left %d versions (%v)", len(vs), err)
		}
		if _, created, err := st.AddVersion(ctx, version("killed", "1.0.0", "k")); err != nil || !created {
			t.Fatalf("redo AddVersion: created %v, %v", created, err)
		}
	case "AddApproval":
		if _, err := st.GetApproval(ctx, "killed-ap"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("killed AddApproval left an approval (err %v)", err)
		}
		if _, err := st.AddApproval(ctx, approval("killed-ap", base)); err != nil {
			t.Fatalf("redo AddApproval: %v", err)
		}
	case "RecordRun":
		if _, err := st.GetRun(ctx, "killed-run"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("killed RecordRun left a run (err %v)", err)
		}
		if _, err := st.LookupIdempotencyKey(ctx, "base", "killed-key"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("killed RecordRun left its idempotency key (err %v)", err)
		}
		r := run("killed-run", base)
		r.IdempotencyKey = "killed-key"
		if _, err := st.RecordRun(ctx, r); err != nil {
			t.Fatalf("redo RecordRun: %v", err)
		}
	}
}
