package batchcmd_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/mockapp"
)

// A transfer whose effect was sent and not confirmed (an undeclared dialog
// after Confirm) is handed to a person; River UI shows the job tagged
// transfer_funds with "needs a person: iv-…" in its log. Retrying it
// through River's client API, as River UI's Retry would, makes no second
// ledger entry: the next attempt finds the first one's run and keeps it.
func TestRiverRetryNeverResendsATransfer(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	w.cua(t, "catalog", "approve", "memberdesk.transfer_funds@1.3.0", "--once", "--input", "member_id=12345",
		"--input", "from_account=Savings", "--input", "to_account=Checking", "--input", "amount=25.00")
	if err := w.ctl.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	worker := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", "120s"}, w.allow...)...)
	worker.Stderr = &logs
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = worker.Process.Signal(syscall.SIGTERM); _ = worker.Wait() }()
	out, err := w.command(append([]string{"submit", "memberdesk.transfer_funds@1.3.0", "--json", "-i", "member_id=12345",
		"-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=25.00", "--unattended",
		"--release-gate", "submit", "--idempotency-key", "pay-12345-1"}, w.base...)...).Output()
	var j jobs.Job
	if err != nil || json.Unmarshal(out, &j) != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(w.dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	wait := func() *jobs.Job {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 150*time.Second)
		defer cancel()
		got, err := q.Wait(wctx, j.ID, 100*time.Millisecond)
		if err != nil {
			t.Fatalf("wait: %v; worker:\n%s", err, tail(logs.String(), 3000))
		}
		return got
	}
	first := wait()
	iv := "iv-" + jobs.RunID(j.ID, 1)
	if first.Result == nil || !first.Result.NeedsHuman || first.Result.Intervention != iv {
		t.Fatalf("transfer job %s %+v; want it handed to a person as %s", first.State, first.Result, iv)
	}
	ledger := func() int {
		l, err := w.ctl.Ledger(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	if n := ledger(); n != 1 {
		t.Fatalf("ledger holds %d entries after the transfer, want 1", n)
	}
	db, err := sql.Open("sqlite", "file:"+jobs.QueuePath(w.dir)+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rc, err := river.NewClient(riversqlite.New(db), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	row, err := rc.JobGet(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if row.Kind != jobs.Kind || !slices.Equal(row.Tags, []string{"transfer_funds"}) ||
		!strings.Contains(string(row.Metadata), `needs a person: `+iv) {
		t.Fatalf("River's row: kind %s tags %q metadata %s; want cua_run, [transfer_funds] and needs a person: %s", row.Kind, row.Tags, row.Metadata, iv)
	}
	if _, err := rc.JobRetry(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	again := wait()
	if again.Attempt != 2 || again.Result == nil || again.Result.RunID != jobs.RunID(j.ID, 1) || again.Result.Intervention != iv {
		t.Fatalf("retried job %s attempt %d %+v; want attempt 2 keeping run %s and %s", again.State, again.Attempt, again.Result, jobs.RunID(j.ID, 1), iv)
	}
	if n := ledger(); n != 1 {
		t.Fatalf("ledger holds %d entries after River's retry, want 1", n)
	}
}
