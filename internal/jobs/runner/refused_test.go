package runner_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/runner"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// wantSignedRefusal checks that the refused run id is in the run index
// (what `cua runs` lists) with its evidence path and anchor, and that its
// bundle verifies as `cua verify --key --db` does: share_ready, signature
// and head ok; its events are run_started, run_refused (code, check) and
// run_finished.
func wantSignedRefusal(t *testing.T, st store.Store, key ed25519.PublicKey, id string, code domain.FailureCode, check string) {
	t.Helper()
	runs, err := st.ListRuns(t.Context(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var row *store.Run
	for i := range runs {
		if runs[i].ID == id {
			row = &runs[i]
		}
	}
	if row == nil || row.Status != domain.StatusFailed || row.FailureCode != code || row.EvidencePath == "" ||
		row.ChainHead == "" || row.Signature == "" {
		t.Fatalf("run %s in the index: %+v; want FAILED %s with its evidence path and anchor", id, row, code)
	}
	rep := evidence.VerifyWith(row.EvidencePath, evidence.VerifyOptions{Key: key, RequireSignature: true,
		Anchor: &evidence.Anchor{ChainHead: row.ChainHead, Signature: row.Signature}})
	if !rep.ShareReady || rep.Signature != evidence.SigOK || rep.Head != evidence.HeadOK {
		t.Fatalf("run %s: share_ready %v signature %s head %s: %v", id, rep.ShareReady, rep.Signature, rep.Head, rep.Reasons)
	}
	raw, err := os.ReadFile(filepath.Join(row.EvidencePath, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for line := range strings.Lines(string(raw)) {
		var e struct {
			Type string `json:"type"`
			Data struct {
				Code  domain.FailureCode `json:"code"`
				Check string             `json:"check"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
		if e.Type == "run_refused" && (e.Data.Code != code || e.Data.Check != check) {
			t.Errorf("run %s refused by %s %s, want %s %s", id, e.Data.Code, e.Data.Check, code, check)
		}
	}
	if strings.Join(types, ",") != "run_started,run_refused,run_finished" {
		t.Errorf("run %s events %v, want run_started, run_refused, run_finished", id, types)
	}
}

// TestWorkerRefusalsHaveSignedBundles (invariant 18): each job the queue's
// worker refuses before a browser opens (a capability the catalog does not
// hold, a pinned hash it does not match, inputs the capability refuses, a
// base URL whose origin the worker does not allow) is a run like any
// other: its job names the run, the run index lists it with its anchor
// (real SQLite store and queue), and its bundle is signed and share_ready.
func TestWorkerRefusalsHaveSignedBundles(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	data := t.TempDir()
	_, key, err := signkey.Init(data, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(data, "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cat, err := catalog.New(catalog.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(examples + "/*.yaml")
	for _, f := range files {
		if _, err := cat.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	r := runner.New(ctx, runner.Config{DataDir: data, Launch: noBrowser(t), AllowOrigins: []string{"http://127.0.0.1:8811"}})
	defer r.Close()
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: filepath.Join(data, "queue.db"), Workers: 1,
		Worker: jobs.NewWorker(cat, st, nil, r, nil), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Stop(context.WithoutCancel(ctx)) }()
	lookup, member := "memberdesk.savings_balance", map[string]string{"member_id": "12345"}
	for _, tc := range []struct {
		name  string
		args  jobs.RunArgs
		code  domain.FailureCode
		check string
	}{
		{"unknown capability", jobs.RunArgs{Ref: "memberdesk.no_such_thing", Inputs: member}, domain.CodeCapabilityInvalid, evidence.CheckCapability},
		{"pinned hash", jobs.RunArgs{Ref: lookup, Inputs: member, ContentHash: "sha256:" + strings.Repeat("0", 64)}, domain.CodeHashMismatch, evidence.CheckContentHash},
		{"inputs", jobs.RunArgs{Ref: lookup, InputSecrets: map[string]string{"member_id": "member"}}, domain.CodeInputInvalid, evidence.CheckInputs},
		{"origin", jobs.RunArgs{Ref: lookup, Inputs: member, BaseURL: "http://127.0.0.1:9/"}, domain.CodeDomainNotAllowed, evidence.CheckOrigin},
	} {
		if tc.args.BaseURL == "" {
			tc.args.BaseURL = "http://127.0.0.1:8811/"
		}
		j, err := q.Submit(ctx, tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if j, err = q.Wait(ctx, j.ID, 20*time.Millisecond); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if j.Result == nil || j.Result.RunID == "" || j.Result.Status != domain.StatusFailed || j.Result.FailureCode != tc.code {
			t.Fatalf("%s: job %+v result %+v; want FAILED %s naming its run", tc.name, j, j.Result, tc.code)
		}
		wantSignedRefusal(t, st, key, j.Result.RunID, tc.code, tc.check)
	}
}
