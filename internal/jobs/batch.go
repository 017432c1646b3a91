package jobs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/riverqueue/river/rivertype"
)

// Row is one line of a batch's inputs file.
type Row struct {
	// N is the row's number, 1 for the first data row.
	N      int               `json:"row"`
	Inputs map[string]string `json:"inputs"`
	// Secrets are the row's sensitive inputs as secret references (input
	// name → ref), never values: a CSV cell "$secret:REF" or a JSON Lines
	// value {"$secret": "REF"}.
	Secrets map[string]string `json:"secrets,omitempty"`
}

// ReadRows reads a batch's rows: a CSV file whose header names the inputs,
// or JSON Lines of objects of input values (strings or numbers). A
// sensitive input is written as a secret reference: a CSV cell
// "$secret:REF", a JSON Lines value {"$secret": "REF"}. Errors name the
// file and row.
func ReadRows(path string) ([]Row, error) {
	data, err := fsx.ReadFile(path, fsx.MaxBatchInputs)
	if err != nil {
		return nil, fmt.Errorf("--inputs: %w", err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return csvRows(path, data)
	case ".jsonl", ".ndjson":
		return jsonlRows(path, data)
	}
	return nil, fmt.Errorf("--inputs %s: want a .csv or .jsonl file", path)
}

func csvRows(path string, data []byte) ([]Row, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("--inputs %s: %w", path, err)
	}
	if len(recs) < 1 {
		return nil, fmt.Errorf("--inputs %s: no header row", path)
	}
	head := recs[0]
	for i, h := range head {
		if strings.TrimSpace(h) == "" {
			return nil, fmt.Errorf("--inputs %s: column %d has no name", path, i+1)
		}
	}
	rows := make([]Row, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		r := Row{N: i + 1, Inputs: make(map[string]string, len(head))}
		for c, h := range head {
			if ref, ok := strings.CutPrefix(strings.TrimSpace(rec[c]), SecretPrefix); ok {
				r.secret(strings.TrimSpace(h), strings.TrimSpace(ref))
				continue
			}
			r.Inputs[strings.TrimSpace(h)] = rec[c]
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func jsonlRows(path string, data []byte) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("--inputs %s line %d: %w", path, line, err)
		}
		r := Row{N: len(rows) + 1, Inputs: make(map[string]string, len(m))}
		for k, v := range m {
			if err := r.set(k, v); err != nil {
				return nil, fmt.Errorf("--inputs %s line %d: %w", path, line, err)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--inputs %s: %w", path, err)
	}
	return rows, nil
}

// set sets one JSON Lines value: a string, number or boolean, or a secret
// reference {"$secret": "REF"}.
func (r *Row) set(k string, v any) error {
	switch v := v.(type) {
	case string:
		r.Inputs[k] = v
	case json.Number:
		r.Inputs[k] = v.String()
	case bool:
		r.Inputs[k] = fmt.Sprint(v)
	case []any:
		// A list input: replay takes its JSON text.
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("input %q: %w", k, err)
		}
		r.Inputs[k] = string(b)
	case map[string]any:
		ref, ok := v["$secret"].(string)
		if !ok || len(v) != 1 {
			return fmt.Errorf("input %q: an object must be a secret reference {\"$secret\": \"REF\"}", k)
		}
		r.secret(k, ref)
	default:
		return fmt.Errorf("input %q: want a string, a number or {\"$secret\": \"REF\"}", k)
	}
	return nil
}

func (r *Row) secret(name, ref string) {
	if r.Secrets == nil {
		r.Secrets = map[string]string{}
	}
	r.Secrets[name] = ref
}

// RowKey is a row's idempotency key: the capability, the application's
// base URL, the row number, its inputs and its secret references (never a
// secret's value), so re-running the same file against the same
// application finds the same jobs, and against another one runs anew.
func RowKey(ref, baseURL string, r Row) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d", ref, strings.TrimRight(baseURL, "/"), r.N)
	for _, k := range slices.Sorted(maps.Keys(r.Inputs)) {
		fmt.Fprintf(h, "\x00%s=%s", k, r.Inputs[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.Secrets)) {
		fmt.Fprintf(h, "\x00%s=%s%s", k, SecretPrefix, r.Secrets[k])
	}
	return "row-" + hex.EncodeToString(h.Sum(nil))[:24]
}

// RowResult is one record of a batch's results file.
type RowResult struct {
	Row         int                `json:"row"`
	Key         string             `json:"idempotency_key"`
	JobID       int64              `json:"job_id"`
	State       string             `json:"state"`
	RunID       string             `json:"run_id,omitempty"`
	Status      domain.RunStatus   `json:"status,omitempty"`
	Outcome     string             `json:"outcome,omitempty"`
	FailureCode domain.FailureCode `json:"failure_code,omitempty"`
	Outputs     map[string]any     `json:"outputs,omitempty"`
	NeedsHuman  bool               `json:"needs_human,omitempty"`
}

// Class is how a row ended for the progress count: "done", "failed" or
// "needs_human".
func (r RowResult) Class() string {
	switch {
	case r.NeedsHuman:
		return "needs_human"
	case r.Status == domain.StatusSuccess || r.Status == domain.StatusBusinessOutcome:
		return "done"
	}
	return "failed"
}

// Progress is a batch's state, passed to BatchParams.Progress.
type Progress struct {
	Total, Done, Failed, NeedsHuman, Skipped int
	Elapsed                                  time.Duration
	// Rescue counts the rows whose job is held by a worker that stopped:
	// it has been running longer than the job timeout plus [RescueSlack]
	// (a live worker would have ended it) and waits for River to rescue
	// it. RescueIn is the longest of their waits left: River's rescuer,
	// which looks every [RescuerInterval], rescues a job at most that long
	// after its rescue delay has passed since the attempt began. The batch
	// takes its own --job-timeout and --rescue-after as the fleet's.
	Rescue   int
	RescueIn time.Duration
}

// RescueSlack is how long past the job timeout a live worker may take to
// return a timed-out run (its browser closing) before the batch counts
// the job as held by a stopped worker.
const RescueSlack = 10 * time.Second

// RescuerInterval is how often River's rescuer looks for stuck jobs (its
// default, which the queue keeps).
const RescuerInterval = 30 * time.Second

// Finished is how many rows have ended, skipped ones included.
func (p Progress) Finished() int { return p.Done + p.Failed + p.NeedsHuman }

// Rate is the rows per second this run finished (skipped rows excluded).
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Finished()-p.Skipped) / p.Elapsed.Seconds()
}

// ETA is the time left at the current rate, and at least the wait for
// a rescue (RescueIn) while rows wait for one; 0 when unknown.
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r <= 0 {
		return p.RescueIn
	}
	return max(time.Duration(float64(p.Total-p.Finished())/r*float64(time.Second)), p.RescueIn)
}

// BatchParams is one batch.
type BatchParams struct {
	// Args is every row's run without inputs and key.
	Args RunArgs
	Rows []Row
	// Out is the results file (JSON Lines, one record per row, in row
	// order once the batch ends); rows it already holds are not run again.
	Out string
	// Progress, when set, is called after every finished row and at least
	// every Tick.
	Progress func(Progress)
	Tick     time.Duration
	Now      func() time.Time
}

// RunBatch queues every row not already in p.Out, waits for all of them,
// appending each result to p.Out as it ends (synced), and finally rewrites
// p.Out in row order (temp file + rename). After a crash, running it again
// submits the same keys: finished jobs are read back, not run again.
func (q *Queue) RunBatch(ctx context.Context, p BatchParams) (Progress, error) {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	if p.Tick == 0 {
		p.Tick = 250 * time.Millisecond
	}
	start := now()
	prev, err := ReadResults(p.Out)
	if err != nil {
		return Progress{}, err
	}
	pr := Progress{Total: len(p.Rows)}
	results := map[int]RowResult{}
	pending, err := q.submitRows(ctx, p, prev, results, &pr)
	if err != nil {
		return pr, err
	}
	f, err := fsx.OpenAppend(p.Out, 0o600)
	if err != nil {
		return pr, fmt.Errorf("--out: %w", err)
	}
	defer f.Close()
	report := func() {
		if p.Progress != nil {
			pr.Elapsed = now().Sub(start)
			p.Progress(pr)
		}
	}
	report()
	t := time.NewTicker(p.Tick)
	defer t.Stop()
	for len(pending) > 0 {
		pr.Rescue, pr.RescueIn = 0, 0
		if err := q.collect(ctx, now(), pending, results, f, &pr, report); err != nil {
			return pr, err
		}
		if len(pending) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return pr, ctx.Err()
		case <-t.C:
			report()
		}
	}
	report()
	return pr, writeResults(p.Out, p.Rows, results)
}

// submitRows queues every row not already in prev (whose results it
// moves to results). Every row is checked ([Queue.Check]) before the first
// is queued: a refused row (a sensitive input given as a value, say)
// leaves the queue as it was. A row whose key the store holds bound to a
// job that ended is already done: its job's result is taken, nothing is
// queued (the results file may have been lost; the store decides).
func (q *Queue) submitRows(ctx context.Context, p BatchParams, prev map[string]RowResult, results map[int]RowResult, pr *Progress) (map[int64]Row, error) {
	check, capID, err := q.checker(ctx, p.Args.Ref)
	if err != nil {
		return nil, err
	}
	var todo []Row
	for _, r := range p.Rows {
		if old, ok := prev[p.rowArgs(r).IdempotencyKey]; ok {
			results[r.N] = old
			count(pr, old)
			pr.Skipped++
			continue
		}
		if err := check(p.rowArgs(r)); err != nil {
			return nil, fmt.Errorf("row %d: %w", r.N, err)
		}
		todo = append(todo, r)
	}
	pending := map[int64]Row{}
	for _, r := range todo {
		a := p.rowArgs(r)
		var j *Job
		if q.keys != nil {
			j, err = q.submitKeyed(ctx, capID, a)
		} else {
			j, err = q.insert(ctx, a)
		}
		if err != nil {
			return pending, fmt.Errorf("row %d: %w", r.N, err)
		}
		if j.Duplicate && j.Final() {
			res := rowResult(r.N, j)
			results[r.N] = res
			count(pr, res)
			pr.Skipped++
			continue
		}
		pending[j.ID] = r
	}
	return pending, nil
}

// rowArgs is the run of one row.
func (p BatchParams) rowArgs(r Row) RunArgs {
	a := p.Args
	a.Inputs, a.InputSecrets, a.IdempotencyKey = r.Inputs, r.Secrets, RowKey(p.Args.Ref, p.Args.BaseURL, r)
	return a
}

// collect reads the pending jobs, moving each final one to results and
// the results file, and counts those waiting for a rescue.
func (q *Queue) collect(ctx context.Context, now time.Time, pending map[int64]Row, results map[int]RowResult, f *os.File, pr *Progress, report func()) error {
	ids := make([]int64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		js, err := q.List(ctx, ListParams{IDs: ids[:n], Limit: n})
		if err != nil {
			return err
		}
		ids = ids[n:]
		for _, j := range js {
			if !j.Final() {
				if wait, ok := q.rescueWait(j, now); ok {
					pr.Rescue, pr.RescueIn = pr.Rescue+1, max(pr.RescueIn, wait)
				}
				continue
			}
			r := pending[j.ID]
			res := rowResult(r.N, j)
			line, _ := json.Marshal(res)
			if _, err := f.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			results[r.N] = res
			delete(pending, j.ID)
			count(pr, res)
			report()
		}
	}
	return f.Sync()
}

// rescueWait reports whether j is held by a stopped worker (see
// [Progress.Rescue]) and how long until River rescues it.
func (q *Queue) rescueWait(j *Job, now time.Time) (time.Duration, bool) {
	if j.State != string(rivertype.JobStateRunning) || j.attemptedAt.IsZero() || q.timeout <= 0 ||
		now.Sub(j.attemptedAt) <= q.timeout+RescueSlack {
		return 0, false
	}
	return max(j.attemptedAt.Add(q.rescue+RescuerInterval).Sub(now), 0), true
}

func count(pr *Progress, r RowResult) {
	switch r.Class() {
	case "done":
		pr.Done++
	case "needs_human":
		pr.NeedsHuman++
	default:
		pr.Failed++
	}
}

func rowResult(n int, j *Job) RowResult {
	r := RowResult{Row: n, Key: j.Args.IdempotencyKey, JobID: j.ID, State: j.State}
	if res := j.Result; res != nil {
		r.RunID, r.Status, r.Outcome, r.FailureCode, r.Outputs, r.NeedsHuman =
			res.RunID, res.Status, res.Outcome, res.FailureCode, res.Outputs, res.NeedsHuman
	} else {
		r.Status = domain.StatusFailed
	}
	return r
}

// ReadResults reads a results file into its records by idempotency key; a
// missing file is empty, and a torn last line (a crash mid-write) is
// ignored.
func ReadResults(path string) (map[string]RowResult, error) {
	data, err := fsx.ReadFile(path, fsx.MaxBatchResults)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]RowResult{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	out := map[string]RowResult{}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var r RowResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			if i == len(lines)-1 {
				break // torn last line
			}
			return nil, fmt.Errorf("--out %s line %d: %w", path, i+1, err)
		}
		out[r.Key] = r
	}
	return out, nil
}

// writeResults rewrites the results file in row order, atomically.
func writeResults(path string, rows []Row, results map[int]RowResult) error {
	var buf bytes.Buffer
	for _, r := range rows {
		if res, ok := results[r.N]; ok {
			line, _ := json.Marshal(res)
			buf.Write(append(line, '\n'))
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".results-*")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, &buf); err != nil {
		tmp.Close()
		return fmt.Errorf("--out: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("--out: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
