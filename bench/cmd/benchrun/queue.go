package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/store"
)

// What the queue phases (batch, fleet, stay) share: a data directory with
// the example capabilities in its catalog, the real bin/cua run in it with
// the operator's secrets in its environment, and the known answer of every
// MemberDesk member the lookups ask for.

// lookupRef is the catalog reference of the reference lookup.
const lookupRef = "memberdesk.savings_balance@1.2.0"

// cuaHome is one data directory (and, for a fleet, one PostgreSQL
// database) that bin/cua runs in.
type cuaHome struct {
	c   *config
	dir string
	db  string // postgres:// URL, or "" for SQLite under dir
	env []string
}

// newCuaHome makes dir a data directory whose catalog (SQLite in dir, or
// the database db) holds every example capability.
func newCuaHome(ctx context.Context, c *config, dir, db string) (*cuaHome, error) {
	if _, err := os.Stat(c.cuaBin); err != nil {
		return nil, fmt.Errorf("no cua binary at %s (make build): %w", c.cuaBin, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	h := &cuaHome{c: c, dir: dir, db: db, env: append(os.Environ(), "CUA_DATA_DIR="+dir, "CUA_DB="+db,
		"CUA_SECRET_COREBANK_OPERATOR="+mockapp.DefaultOperator, "CUA_SECRET_COREBANK_PASSWORD="+mockapp.DefaultPassword)}
	files, err := filepath.Glob(filepath.Join(c.root, "examples", "capabilities", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no example capabilities under %s", filepath.Join(c.root, "examples", "capabilities"))
	}
	if _, err := h.run(ctx, append([]string{"catalog", "add"}, files...)...); err != nil {
		return nil, err
	}
	return h, nil
}

// command is bin/cua with args, in the home's directory and environment.
func (h *cuaHome) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.c.cuaBin, args...)
	cmd.Dir, cmd.Env = h.dir, h.env
	return cmd
}

// run runs bin/cua to the end and returns its stdout; a non-zero exit is
// an error carrying both streams.
func (h *cuaHome) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := h.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("cua %s: %w\n%s%s", strings.Join(args, " "), err, tail(stdout.String(), 2000), tail(stderr.String(), 2000))
	}
	return stdout.Bytes(), nil
}

// queue opens the home's run queue as a client that only reads and
// submits.
func (h *cuaHome) queue(ctx context.Context) (*jobs.Queue, error) {
	return jobs.Open(ctx, jobs.Config{DB: h.db, SQLitePath: jobs.QueuePath(h.dir)})
}

// endedRuns counts, per job, the indexed runs that ended with an answer
// (SUCCESS or a business outcome). A timed-out attempt that sent nothing
// ends FAILED and is retried by design; it is not a second completion.
func (h *cuaHome) endedRuns(ctx context.Context) (map[string]int, error) {
	_, st, err := launch.Catalog(ctx, launch.StoreOptions{DB: h.db, DataDir: h.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range runs {
		job, _, _ := strings.Cut(r.ID, "-a")
		if !r.EndedAt.IsZero() && (r.Status == domain.StatusSuccess || r.Status == domain.StatusBusinessOutcome) {
			out[job]++
		}
	}
	return out, nil
}

// answer is what a correct lookup of a member ends with: SUCCESS with
// these outputs (canonical forms), or the business outcome code.
type answer struct {
	outputs outputs
	outcome string
}

// known are MemberDesk's fixture members (internal/mockapp/fixtures.go)
// and what the reference lookup must answer for each, plus a number no
// member has. The lookups cycle through them, so a run that read another
// member's screen (a stale page on a warm session) is caught.
var known = map[string]answer{
	"12345": {outputs: want},
	"23456": {outputs: outputs{SavingsBalance: "0.00", Status: "Closed", AsOf: "2026-11-30"}},
	"34567": {outcome: "no_savings_account"},
	"45678": {outcome: "member_restricted"},
	"56789": {outputs: outputs{SavingsBalance: "12345678.90", Status: "Active", AsOf: "2026-11-30"}},
	"99999": {outcome: "member_not_found"},
}

// lookupMembers is the order the rows cycle through known.
var lookupMembers = []string{"12345", "56789", "23456", "34567", "12345", "45678", "56789", "99999"}

// memberOf is row i's member.
func memberOf(i int) string { return lookupMembers[i%len(lookupMembers)] }

// verdict says how a finished lookup of member compares with its known
// answer: "" when right, "wrong: …" when it answered something else, or
// the failure ("FAILED …", "NEEDS_HUMAN …") when it gave no answer.
func verdict(member string, status domain.RunStatus, outcome string, failure domain.FailureCode, got map[string]any) string {
	a, ok := known[member]
	if !ok {
		return "no known answer for member " + member
	}
	switch status {
	case domain.StatusSuccess:
		o := recordOutputs(&domain.RunRecord{Outputs: got})
		if a.outcome != "" || o != a.outputs {
			return fmt.Sprintf("wrong: member %s answered %s, want %s", member, o, a)
		}
	case domain.StatusBusinessOutcome:
		if outcome != a.outcome {
			return fmt.Sprintf("wrong: member %s ended %s, want %s", member, outcome, a)
		}
	default:
		return fmt.Sprintf("%s %s", status, failure)
	}
	return ""
}

func (a answer) String() string {
	if a.outcome != "" {
		return "outcome " + a.outcome
	}
	return a.outputs.String()
}

// writeLookupCSV writes n rows of member_id to path.
func writeLookupCSV(path string, n int) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"member_id"})
	for i := range n {
		_ = w.Write([]string{memberOf(i)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// supportsFlag reports whether `cua SUBCOMMAND --help` lists flag.
func supportsFlag(ctx context.Context, c *config, sub, flag string) bool {
	out, _ := exec.CommandContext(ctx, c.cuaBin, sub, "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--"+flag))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
