package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/demo"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/mockapp"
)

// serveClient is a caller of `cua serve`'s jobs API holding a principal's
// token.
type serveClient struct{ base, token string }

// startServe runs `cua serve --workers 0` on the fleet's PostgreSQL (its
// own data dir, loopback, a free port) and returns a client holding token.
func (f *relayFleet) startServe(t *testing.T, token string) *serveClient {
	t.Helper()
	f.start(t, f.env(t.TempDir()), "serve", "--addr", "127.0.0.1:0", "--workers", "0", "--allow-origin", f.app.app.URL())
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+) `)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := re.FindStringSubmatch(f.logs.String()); m != nil {
			return &serveClient{base: m[1], token: token}
		}
	}
	t.Fatalf("cua serve never said where it listens:\n%s", tailOf(f.logs.String(), 4000))
	return nil
}

// do sends one JSON request to the jobs API and decodes the answer into out.
func (c *serveClient) do(t *testing.T, method, path string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %v\n%s", method, path, res.StatusCode, err, raw)
	}
	return res.StatusCode
}

// submit queues a run through the API and wants 201.
func (c *serveClient) submit(t *testing.T, args map[string]any) jobs.Job {
	t.Helper()
	var j jobs.Job
	if code := c.do(t, http.MethodPost, "/v1/runs", args, &j); code != http.StatusCreated || j.ID == 0 {
		t.Fatalf("POST /v1/runs %v: %d %+v", args["ref"], code, j)
	}
	if j.Args.SubmittedBy != "alice" {
		t.Errorf("job %d submitted_by %q, want alice", j.ID, j.Args.SubmittedBy)
	}
	return j
}

// wait polls GET /v1/runs/{id} until the run has its result.
func (c *serveClient) wait(t *testing.T, id int64, logs *syncBuffer) jobs.Job {
	t.Helper()
	var j jobs.Job
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		j = jobs.Job{}
		if code := c.do(t, http.MethodGet, fmt.Sprintf("/v1/runs/%d", id), nil, &j); code == http.StatusOK && j.Result != nil && j.FinalizedAt != nil {
			return j
		}
	}
	t.Fatalf("run %d never finished: %+v\nlogs:\n%s", id, j, tailOf(logs.String(), 4000))
	return j
}

// TestRelayFleetTakeover (issue 25's Done-when): `cua serve`, two `cua
// worker --park` on PostgreSQL and `cua console` in a third process, with
// evidence in an S3-protocol store. Alice submits a transfer and a lookup
// through serve's jobs API with her principal token; the transfer, whose
// submit posts and then shows an undeclared Survey dialog, escalates and
// parks in the worker that took it, and the lookup goes to the other
// worker. Alice, in a Chromium of her own, signs in to the console,
// watches the parked run through the relayed screencast, claims it, clicks
// "No thanks" where she sees it on the live picture (dispatched by the
// worker), releases and resumes; the job ends SUCCESS and the park's
// intervention is resolved (by the resume; one left open would be
// resolved landed by her with cua interventions resolve). The ledger
// holds exactly one entry, `cua observe --evidence` lists both workers'
// runs and `cua verify --evidence` passes the transfer's.
func TestRelayFleetTakeover(t *testing.T) {
	f, alice := newRelayFleet(t)
	ctx := t.Context()
	if err := f.app.ctl.Arm(ctx, mockapp.FaultDialogAfterSubmit, 1, 0); err != nil {
		t.Fatal(err)
	}
	api := f.startServe(t, alice)
	inputs := map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"}
	tj := api.submit(t, map[string]any{"ref": transferRef(t), "base_url": f.app.app.URL(), "inputs": inputs, "unattended": true,
		"release_gates": []string{"submit"}, "idempotency_key": "pay-takeover-1"})
	lj := api.submit(t, map[string]any{"ref": "memberdesk.savings_balance@1.2.0", "base_url": f.app.app.URL(),
		"inputs": map[string]string{"member_id": "23456"}})
	session := jobs.RunID(tj.ID, 1)
	if err := demo.Operate(ctx, "", f.console, alice, session); err != nil {
		t.Fatalf("%v\nlogs:\n%s", err, tailOf(f.logs.String(), 4000))
	}
	done, look := api.wait(t, tj.ID, f.logs), api.wait(t, lj.ID, f.logs)
	if done.Result.Status != "SUCCESS" || look.Result.Status != "SUCCESS" {
		t.Fatalf("the transfer ended %+v, the lookup %+v; want both SUCCESS\nlogs:\n%s", done.Result, look.Result, tailOf(f.logs.String(), 4000))
	}
	if len(done.AttemptedBy) != 1 || len(look.AttemptedBy) != 1 || done.AttemptedBy[0] == look.AttemptedBy[0] {
		t.Errorf("the lookup worked by %v, the transfer by %v; want the two workers", look.AttemptedBy, done.AttemptedBy)
	}
	if l, err := f.app.ctl.Ledger(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ledger: %d entries, %v; want 1", len(l), err)
	}
	resolveLanded(t, f, alice, session)
	observeLists(t, f.s3, t.TempDir(), done.Result.RunID, look.Result.RunID)
	if r := runBin(t, nil, "verify", done.Result.RunID, "--evidence", f.s3, "--key", f.pub, "--data-dir", t.TempDir()); r.code != 0 || !strings.Contains(r.stdout, "share_ready: true") {
		t.Errorf("verify the transfer from the store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// resolveLanded resolves, as alice, every intervention of session still
// open with `cua interventions resolve --landed`, and wants the park's
// intervention in the queue and none open afterwards (Resume closes the
// park's intervention itself when the run finishes).
func resolveLanded(t *testing.T, f *relayFleet, alice, session string) {
	t.Helper()
	type ivs struct {
		Interventions []struct {
			ID     string `json:"id"`
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"interventions"`
	}
	list := func() ivs {
		var l ivs
		out := f.cua(t, "interventions", "list", "--json")
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("cua interventions list --json: %v\n%s", err, out)
		}
		return l
	}
	for _, iv := range list().Interventions {
		if iv.RunID != session || iv.Status != "open" {
			continue
		}
		r := runBin(t, append(f.env(f.dirs[0]), "CUA_PRINCIPAL_TOKEN="+alice), "interventions", "resolve", iv.ID, "--landed",
			"--note", "the ledger holds the one transfer")
		if r.code != 0 {
			t.Fatalf("resolve %s: exit %d\n%s%s", iv.ID, r.code, r.stdout, r.stderr)
		}
		t.Logf("resolved %s landed as alice", iv.ID)
	}
	var seen []string
	for _, iv := range list().Interventions {
		if iv.RunID == session {
			seen = append(seen, iv.ID+" "+iv.Status)
		}
		if iv.RunID == session && iv.Status == "open" {
			t.Errorf("intervention %s of the transfer still open", iv.ID)
		}
	}
	if len(seen) == 0 {
		t.Errorf("the parked transfer left no intervention in the queue")
	}
	t.Logf("the transfer's interventions: %v", seen)
}
