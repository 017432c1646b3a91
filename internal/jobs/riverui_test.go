package jobs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/cuahq/cua/internal/jobs"
)

// riverRow reads a job as River UI does: River's own row, from a client of
// River's own over the queue's SQLite file.
func riverRow(t *testing.T, rc *river.Client[*sql.Tx], id int64) (*rivertype.JobRow, map[string]json.RawMessage, string) {
	t.Helper()
	row, err := rc.JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]json.RawMessage
	if err := json.Unmarshal(row.Metadata, &md); err != nil {
		t.Fatalf("metadata %s: %v", row.Metadata, err)
	}
	var logs []struct {
		Attempt int    `json:"attempt"`
		Log     string `json:"log"`
	}
	if raw, ok := md["river:log"]; ok {
		if err := json.Unmarshal(raw, &logs); err != nil {
			t.Fatalf("river:log %s: %v", raw, err)
		}
	}
	var all strings.Builder
	for _, l := range logs {
		all.WriteString(l.Log)
	}
	return row, md, all.String()
}

// River UI shows what a run is: its capability as a tag and in its
// metadata, and in the attempt's log how it ended and, for a run handed to
// a person, "needs a person: iv-…". Retrying that cancelled job through
// River's client API (River UI's Retry) runs nothing again: the next
// attempt finds the first one's run and cancels the job once more.
func TestRiverShowsWhatAJobIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, &fakeRunner{die: func(id string) bool { return strings.HasPrefix(id, "j2-") }})
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.dir, "queue.db")+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rc, err := river.NewClient(riversqlite.New(db), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}

	ok := b.wait(t, must(t)(b.q.Submit(ctx, args(lookup, "12345", ""))))
	row, md, log := riverRow(t, rc, ok.ID)
	if row.Kind != jobs.Kind || !slices.Equal(row.Tags, []string{"savings_balance"}) || string(md["capability"]) != `"`+lookup+`"` {
		t.Errorf("lookup job: kind %s tags %q metadata %s; want %s, [savings_balance], capability %s", row.Kind, row.Tags, row.Metadata, jobs.Kind, lookup)
	}
	if !strings.Contains(log, `msg="run ended" run_id=j1-a1 capability=`+lookup+` status=SUCCESS`) {
		t.Errorf("lookup job's log %q does not say how its run ended", log)
	}

	iv := b.wait(t, must(t)(b.q.Submit(ctx, args(transfer, "12345", "pay-1"))))
	if iv.State != "cancelled" || iv.Result == nil || iv.Result.Intervention != "iv-j2-a1" {
		t.Fatalf("transfer job %s %+v; want cancelled, handed to a person", iv.State, iv.Result)
	}
	row, _, log = riverRow(t, rc, iv.ID)
	if !slices.Equal(row.Tags, []string{"transfer_funds"}) || !strings.Contains(log, `msg="needs a person: iv-j2-a1" run_id=j2-a1 why=`) {
		t.Fatalf("intervention job: tags %q, log %q; want [transfer_funds] and needs a person: iv-j2-a1", row.Tags, log)
	}

	if _, err := rc.JobRetry(ctx, iv.ID); err != nil {
		t.Fatal(err)
	}
	again := b.wait(t, iv)
	if again.State != "cancelled" || again.Attempt != 2 || again.Result == nil || again.Result.Intervention != "iv-j2-a1" {
		t.Fatalf("retried transfer job %s attempt %d %+v; want cancelled again at attempt 2 naming iv-j2-a1", again.State, again.Attempt, again.Result)
	}
	if n := b.run.n.Load(); n != 2 {
		t.Fatalf("%d runs made; want 2 (the lookup and the transfer's first attempt), none for the retry", n)
	}
	ivs, err := b.q.Interventions(ctx, "")
	if err != nil || len(ivs) != 1 {
		t.Fatalf("interventions %+v %v; want the one", ivs, err)
	}
}

func must(t *testing.T) func(*jobs.Job, error) *jobs.Job {
	return func(j *jobs.Job, err error) *jobs.Job {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
}
