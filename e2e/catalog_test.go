package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/store/pgtest"
)

// catalogWorld is one MemberDesk and one data dir (its SQLite store at
// <data-dir>/cua.db) shared by the sequential steps of TestCatalogApproval.
type catalogWorld struct {
	*bundle
	env []string
	// standing is the id of the bounded approval earned from the evals.
	standing string
}

// cua runs the real binary against the world's data dir and app.
func (w *catalogWorld) cua(t *testing.T, args ...string) binResult {
	t.Helper()
	return runBin(t, w.env, args...)
}

// approvedVersion is the transfer version the approvals are granted for.
const approvedVersion = "1.3.0"

// transfer replays the catalog's transfer of amount with extra flags and
// returns the exit code and the run record printed with --json.
func (w *catalogWorld) transfer(t *testing.T, amount string, flags ...string) (int, *domain.RunRecord) {
	t.Helper()
	return w.transferOf(t, transfer+"@"+approvedVersion, amount, flags...)
}

// transferOf replays ref, a transfer version in the catalog.
func (w *catalogWorld) transferOf(t *testing.T, ref, amount string, flags ...string) (int, *domain.RunRecord) {
	t.Helper()
	args := append([]string{"replay", ref, "--json", "--base-url", w.app.URL(),
		"-i", "member_id=12345", "-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=" + amount}, flags...)
	r := w.cua(t, args...)
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("replay %s: exit %d, no record: %v\nstdout: %s\nstderr: %s", amount, r.code, err, r.stdout, r.stderr)
	}
	return r.code, &rec
}

// traffic is what the app has seen: ledger entries and every content
// request (GET and POST) it counted.
func (w *catalogWorld) traffic(t *testing.T) (ledger, requests int) {
	t.Helper()
	for _, n := range w.state(t).Requests {
		requests += n
	}
	return w.ledgerLen(t), requests
}

// refused asserts an --unattended transfer of amount is refused with
// APPROVAL_REQUIRED naming why, before the browser starts: a non-zero
// exit, no dispatch, no request reaching the app and no ledger entry.
func (w *catalogWorld) refused(t *testing.T, amount, why string) {
	t.Helper()
	ledger, requests := w.traffic(t)
	code, rec := w.transfer(t, amount, "--unattended", "--release-gate", "submit")
	if code == 0 || rec.Status != domain.StatusFailed || rec.FailureCode != domain.CodeApprovalRequired {
		t.Errorf("transfer %s: exit %d %s %s (%s), want a non-zero exit and FAILED APPROVAL_REQUIRED", amount, code, rec.Status, rec.FailureCode, rec.Message)
	}
	if !strings.Contains(rec.Message, why) {
		t.Errorf("transfer %s refused with %q, want it to say %q", amount, rec.Message, why)
	}
	if rec.DispatchCount != 0 {
		t.Errorf("transfer %s: %d dispatches, want 0", amount, rec.DispatchCount)
	}
	if l, r := w.traffic(t); l != ledger || r != requests {
		t.Errorf("transfer %s refused, yet the app saw it: ledger %d → %d, requests %d → %d", amount, ledger, l, requests, r)
	}
}

// succeeded asserts an --unattended transfer of amount posted exactly one
// ledger entry; it returns the record.
func (w *catalogWorld) succeeded(t *testing.T, amount string, flags ...string) *domain.RunRecord {
	t.Helper()
	before := w.ledgerLen(t)
	code, rec := w.transfer(t, amount, append([]string{"--unattended", "--release-gate", "submit"}, flags...)...)
	if code != 0 || rec.Status != domain.StatusSuccess {
		t.Fatalf("transfer %s: exit %d %s %s (%s), want SUCCESS", amount, code, rec.Status, rec.FailureCode, rec.Message)
	}
	if after := w.ledgerLen(t); after != before+1 {
		t.Errorf("transfer %s: ledger %d → %d, want one new entry", amount, before, after)
	}
	return rec
}

// approve runs `catalog approve` and returns the approval id it printed
// ("approved REF HASH as ID by …").
func (w *catalogWorld) approve(t *testing.T, args ...string) string {
	t.Helper()
	r := w.cua(t, append([]string{"catalog", "approve", transfer + "@" + approvedVersion}, args...)...)
	if r.code != 0 {
		t.Fatalf("catalog approve %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	_, rest, ok := strings.Cut(r.stdout, " as ")
	id, _, _ := strings.Cut(rest, " ")
	if !ok || id == "" {
		t.Fatalf("catalog approve printed no approval id: %q", r.stdout)
	}
	return id
}

// TestCatalogApproval drives the real binary through the catalog story on
// one MemberDesk and one SQLite store: id@version is frozen; five eval
// replays earn a bounded approval; an unattended transfer inside the bounds
// posts, one outside, after revocation or after expiry is refused before
// the browser starts; an idempotency key returns the first run; a one-off
// approval is consumed by its one run.
func TestCatalogApproval(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		catalogApproval(t, "")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		// A real private PostgreSQL (Debian's postgresql; no skip without it).
		pg, err := pgtest.Start(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Stop)
		if _, err := pg.CreateDatabase(t.Context(), "catalog"); err != nil {
			t.Fatal(err)
		}
		catalogApproval(t, pg.URL("catalog"))
	})
}

// catalogApproval walks the catalog's story on one store: SQLite under the
// data dir when db is empty, else the PostgreSQL database db (CUA_DB).
func catalogApproval(t *testing.T, db string) {
	b := setup(t, mockapp.Options{})
	w := &catalogWorld{bundle: b, env: []string{"CUA_DATA_DIR=" + b.dataDir,
		"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}}
	if db != "" {
		w.env = append(w.env, "CUA_DB="+db)
	}
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"add, then a different file under the same id@version refused", w.addImmutable},
		{"five eval replays earn approve --from-eval --max amount=500.00", w.evalAndApprove},
		{"unattended 250.00 posts; its idempotency key returns the same run", w.withinBounds},
		{"unattended 900.00 refused before the browser starts", func(t *testing.T) { w.refused(t, "900.00", "amount") }},
		{"approval of other content refused", w.otherContent},
		{"revoked, then expired approval refused", w.revokedAndExpired},
		{"one-off approval used twice: second refused", w.oneOff},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.Fatalf("step %q failed; later steps depend on it", s.name)
		}
	}
}

func (w *catalogWorld) addImmutable(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	if r := w.cua(t, append([]string{"catalog", "add"}, files...)...); r.code != 0 || strings.Count(r.stdout, "added ") != len(files) {
		t.Fatalf("catalog add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := w.cua(t, "catalog", "list")
	if before.code != 0 || !strings.Contains(before.stdout, lookup) {
		t.Fatalf("catalog list: exit %d\n%s%s", before.code, before.stdout, before.stderr)
	}
	orig := load(t, lookup)
	changed := derive(t, lookup, "Five-digit member number.", "The member's five-digit number.")
	r := w.cua(t, "catalog", "add", changed.File)
	if r.code == 0 {
		t.Fatalf("catalog add of a different %s@1.2.0 succeeded:\n%s", lookup, r.stdout)
	}
	for _, h := range []string{orig.Hash, changed.Hash} {
		if !strings.Contains(r.stderr, h) {
			t.Errorf("refusal does not name hash %s: %s", h, r.stderr)
		}
	}
	if after := w.cua(t, "catalog", "list"); after.stdout != before.stdout {
		t.Errorf("catalog list changed after a refused add:\nbefore:\n%s\nafter:\n%s", before.stdout, after.stdout)
	}
}

func (w *catalogWorld) evalAndApprove(t *testing.T) {
	l := load(t, transfer)
	dev := filepath.Join(t.TempDir(), "eval-approval.json")
	body := fmt.Sprintf(`{"capability": %q, "content_hash": %q, "approver": "e2e"}`, l.Capability.Ref(), l.Hash)
	if err := os.WriteFile(dev, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// Too few evals: the approval is refused and names the count.
	if r := w.cua(t, "catalog", "approve", transfer+"@"+approvedVersion, "--from-eval", "--max", "amount=500.00"); r.code == 0 ||
		!strings.Contains(r.stderr, "0 successful eval replay(s)") {
		t.Errorf("approve before any eval: exit %d %s", r.code, r.stderr)
	}
	for i := range 5 {
		code, rec := w.transfer(t, "25.00", "--eval", "--allow-irreversible", "--approval", dev, "--release-gate", "submit")
		if code != 0 || rec.Status != domain.StatusSuccess {
			t.Fatalf("eval %d: exit %d %s %s (%s)", i+1, code, rec.Status, rec.FailureCode, rec.Message)
		}
	}
	if n := w.ledgerLen(t); n != 5 {
		t.Errorf("ledger has %d entries after five evals, want 5", n)
	}
	w.standing = w.approve(t, "--from-eval", "--max", "amount=500.00")
}

func (w *catalogWorld) withinBounds(t *testing.T) {
	first := w.succeeded(t, "250.00", "--idempotency-key", "k-250")
	ledger, _ := w.traffic(t)
	code, again := w.transfer(t, "250.00", "--unattended", "--release-gate", "submit", "--idempotency-key", "k-250")
	if code != 0 || again.RunID != first.RunID || again.Status != domain.StatusSuccess {
		t.Errorf("re-run with the same key: exit %d run %s %s, want the first run %s SUCCESS", code, again.RunID, again.Status, first.RunID)
	}
	if n := w.ledgerLen(t); n != ledger {
		t.Errorf("re-run with the same key posted: ledger %d → %d", ledger, n)
	}
	if r := w.cua(t, "runs", "show", first.RunID); r.code != 0 || !strings.Contains(r.stdout, first.RunID) {
		t.Errorf("runs show %s: exit %d %s%s", first.RunID, r.code, r.stdout, r.stderr)
	}
}

// otherContent adds a changed transfer as 1.3.1: the approval of 1.3.0's
// content does not cover it, even inside the bound.
func (w *catalogWorld) otherContent(t *testing.T) {
	next := derive(t, transfer, "version: 1.3.0", "version: 1.3.1")
	if r := w.cua(t, "catalog", "add", next.File); r.code != 0 {
		t.Fatalf("catalog add 1.3.1: exit %d %s", r.code, r.stderr)
	}
	ledger, requests := w.traffic(t)
	code, rec := w.transferOf(t, transfer+"@1.3.1", "250.00", "--unattended", "--release-gate", "submit")
	if code == 0 || rec.FailureCode != domain.CodeApprovalRequired || rec.DispatchCount != 0 || rec.ContentHash != next.Hash {
		t.Errorf("1.3.1 unattended: exit %d %s %s, %d dispatches, hash %s; want APPROVAL_REQUIRED for %s", code, rec.Status,
			rec.FailureCode, rec.DispatchCount, rec.ContentHash, next.Hash)
	}
	if l, r := w.traffic(t); l != ledger || r != requests {
		t.Errorf("1.3.1 refused, yet the app saw it: ledger %d → %d, requests %d → %d", ledger, l, requests, r)
	}
}

func (w *catalogWorld) revokedAndExpired(t *testing.T) {
	if r := w.cua(t, "catalog", "revoke", w.standing); r.code != 0 {
		t.Fatalf("revoke: exit %d %s", r.code, r.stderr)
	}
	w.refused(t, "250.00", "revoked")
	w.approve(t, "--from-eval", "--max", "amount=500.00", "--expires", "1s")
	time.Sleep(1100 * time.Millisecond)
	w.refused(t, "250.00", "expired")
}

func (w *catalogWorld) oneOff(t *testing.T) {
	w.approve(t, "--once", "-i", "member_id=12345", "-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=10.00")
	w.refused(t, "11.00", "amount")
	w.succeeded(t, "10.00")
	w.refused(t, "10.00", "already used")
}
