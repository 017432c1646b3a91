package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/surface"
)

// transferCap is the irreversible capability the approval stages approve.
const transferCap = "memberdesk.transfer_funds"

// transferVersion is the version of transferCap the approval stages run:
// 1.3.0 carries the confirm step's effect contract, which catalog approve
// expects of an irreversible write.
const transferVersion = "1.3.0"

// Approval is the bound the approval stages approve the transfer under,
// and the two amounts they run unattended: one inside it, one outside.
const (
	ApprovalMax    = "500.00"
	AcceptedAmount = "250.00"
	RefusedAmount  = "900.00"
	// evalAmount is what each eval replay transfers.
	evalAmount = "25.00"
	// approvalLife bounds the approval the demo grants: its catalog is
	// the demo's own, yet the approval should not outlive the story.
	approvalLife = time.Hour
)

// CatalogPath is where the approval stages keep their SQLite store: a
// catalog of the demo's own under its data dir, apart from the team's
// <data-dir>/cua.db, so that the demo's approval of the reference transfer
// never authorizes a run outside it (`cua catalog show --data-dir
// DATA/demo` reads it).
func CatalogPath(dataDir string) string { return filepath.Join(dataDir, "demo", "cua.db") }

// transferInputs are the transfer's inputs for amount.
func transferInputs(amount string) map[string]string {
	return map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": amount}
}

// approvalStages runs the catalog story on a SQLite store under the data
// dir: five eval replays of the transfer, an approval earned from them
// (--from-eval --max amount=500.00), an unattended transfer inside the
// bound that posts and one outside it refused before a session opens.
// Each result fails when an earlier one did.
func (e *env) approvalStages(ctx context.Context) []*Result {
	in := func(amount string, unattended bool) Stage {
		return Stage{Capability: transferCap, Inputs: transferInputs(amount), Gates: []string{"submit"}, Irrev: !unattended,
			Approve: !unattended, WantStatus: domain.StatusSuccess, WantDispatches: -1}
	}
	evals := &Result{Stage: in(evalAmount, false)}
	evals.Name, evals.WantLedger = "five eval replays of the transfer", catalog.MinEvalRuns
	approve := &Result{Stage: Stage{Name: "approve from evals: amount <= " + ApprovalMax, Capability: transferCap}}
	ok := &Result{Stage: in(AcceptedAmount, true)}
	ok.Name, ok.WantLedger = "unattended transfer "+AcceptedAmount+" accepted", catalog.MinEvalRuns+1
	ok.WantOutputs = map[string]string{"confirmation": fmt.Sprintf("TRF-%04d", catalog.MinEvalRuns+1)}
	no := &Result{Stage: in(RefusedAmount, true)}
	no.Name, no.WantLedger, no.WantDispatches = "unattended transfer "+RefusedAmount+" refused", catalog.MinEvalRuns+1, 0
	no.WantStatus, no.WantCode = domain.StatusFailed, domain.CodeApprovalRequired
	all := []*Result{evals, approve, ok, no}
	fail := func(from int, format string, args ...any) []*Result {
		for _, r := range all[from:] {
			r.fail(format, args...)
		}
		return all
	}
	cat, closeStore, err := e.openCatalog(ctx)
	if err != nil {
		return fail(0, "%v", err)
	}
	defer closeStore()
	if !e.evalStage(ctx, cat, evals) {
		return fail(1, "no eval replays to approve from")
	}
	if !e.approveStage(ctx, cat, approve) {
		return fail(2, "no approval")
	}
	e.unattendedStage(ctx, cat, ok)
	e.unattendedStage(ctx, cat, no)
	return all
}

// openCatalog opens the SQLite store at CatalogPath and adds every sealed
// capability of the capabilities directory (adding the same file again is
// a no-op). The caller calls the returned function to close the store.
func (e *env) openCatalog(ctx context.Context) (*catalog.Catalog, func(), error) {
	db, err := sqlite.Open(ctx, CatalogPath(e.cfg.DataDir), store.Config{})
	if err != nil {
		return nil, nil, err
	}
	cat, err := catalog.New(catalog.Config{Store: db})
	if err == nil {
		err = addSealed(ctx, cat, e.cfg.Capabilities)
	}
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return cat, func() { _ = db.Close() }, nil
}

// addSealed adds every sealed capability file of dir to cat; files that do
// not load or are drafts are skipped, as replay.LoadDir skips them.
func addSealed(ctx context.Context, cat *catalog.Catalog, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	for _, ent := range entries {
		ext := strings.ToLower(filepath.Ext(ent.Name()))
		if ent.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		path := filepath.Join(dir, ent.Name())
		if l, err := capability.LoadContext(ctx, path); err != nil || !l.Sealed {
			continue
		}
		if _, err := cat.AddFile(ctx, path); err != nil {
			return fmt.Errorf("catalog add: %w", err)
		}
	}
	return nil
}

// evalStage resets the app and runs catalog.MinEvalRuns eval replays of the
// transfer, released and approved as a reviewer would for an eval; it
// passes when every one succeeded and each posted once.
func (e *env) evalStage(ctx context.Context, cat *catalog.Catalog, r *Result) bool {
	if err := e.app.Reset(ctx); err != nil {
		r.fail("reset mock app: %v", err)
		return false
	}
	var ms int64
	for i := range catalog.MinEvalRuns {
		rec, _, err := e.gatedReplay(ctx, cat, r.Stage, catalog.RunParams{Eval: true})
		if err != nil {
			r.fail("eval %d: %v", i+1, err)
			return false
		}
		r.Record, ms = rec, ms+rec.DurationMS
		if p := checkRecord(r.Stage, rec); p != "" {
			r.fail("eval %d: %s", i+1, p)
			return false
		}
	}
	r.Pass = true
	if e.checkApp(ctx, r); !r.Pass {
		return false
	}
	r.Detail = fmt.Sprintf("%d of %d SUCCESS (%d ms in all), %d ledger entries, %s", catalog.MinEvalRuns, catalog.MinEvalRuns,
		ms, r.WantLedger, r.Record.ContentHash)
	return true
}

// approveStage approves the transfer from its eval replays, within
// amount <= ApprovalMax.
func (e *env) approveStage(ctx context.Context, cat *catalog.Catalog, r *Result) bool {
	a, err := cat.Approve(ctx, transferCap+"@"+transferVersion, catalog.ApproveParams{FromEval: true,
		Max: map[string]string{"amount": ApprovalMax}, Expires: approvalLife, Approver: "demo-reviewer",
		Note: "cua demo: earned from its eval replays"})
	if err != nil {
		r.fail("%v", err)
		return false
	}
	r.Pass = true
	r.Detail = fmt.Sprintf("%s by %s: %s", a.ID, a.Approver, catalog.Describe(a))
	return true
}

// unattendedStage runs the transfer unattended through the catalog: the
// approval, not the stage, must allow its irreversible step. It also
// checks that a run refused before its surface opened reached the app not
// at all.
func (e *env) unattendedStage(ctx context.Context, cat *catalog.Catalog, r *Result) {
	before, err := e.app.State(ctx)
	if err != nil {
		r.fail("read state: %v", err)
		return
	}
	rec, opened, err := e.gatedReplay(ctx, cat, r.Stage, catalog.RunParams{Unattended: true})
	if err != nil {
		r.fail("%v", err)
		return
	}
	r.Record, r.Pass = rec, true
	if p := checkRecord(r.Stage, rec); p != "" {
		r.fail("%s", p)
	}
	e.checkApp(ctx, r)
	if r.WantDispatches == 0 && r.Pass {
		after, err := e.app.State(ctx)
		switch {
		case err != nil:
			r.fail("read state: %v", err)
		case opened:
			r.fail("a browser session opened for a refused run")
		case requests(after) != requests(before):
			r.fail("the app saw %d requests from a refused run", requests(after)-requests(before))
		}
	}
	if r.Pass {
		r.Detail = detail(rec) + ", browser session opened: " + map[bool]string{true: "yes", false: "no"}[opened]
		if rec.FailureCode != "" {
			r.Detail += ": " + rec.Message
		}
	}
}

// requests counts every content request the app has seen.
func requests(st mockapp.State) int {
	n := 0
	for _, c := range st.Requests {
		n += c
	}
	return n
}

// gatedReplay runs the stage's capability from the catalog through its
// Gate, as `cua replay ID` does; opened reports whether a browser session
// was opened for it.
func (e *env) gatedReplay(ctx context.Context, cat *catalog.Catalog, st Stage, p catalog.RunParams) (rec *domain.RunRecord, opened bool, err error) {
	l, _, err := cat.Resolve(ctx, st.Capability+"@"+transferVersion)
	if err != nil {
		return nil, false, err
	}
	o := replay.Options{Capability: l, Inputs: st.Inputs, BaseURL: e.base, Secrets: demoSecrets(), Redactor: e.cfg.Redactor,
		DataDir: e.cfg.DataDir, RunID: e.cfg.RunID(), Logger: e.cfg.Logger, AllowIrreversible: st.Irrev, ReleasedGates: st.Gates}
	if st.Approve {
		o.Approval = &policy.Approval{Capability: l.Capability.Ref(), ContentHash: l.Hash, Approver: "demo reviewer"}
	}
	rec, err = pipeline.Replay(ctx, pipeline.ReplayParams{Run: o, Library: cat.Library(ctx), Gate: cat.Gate(p),
		Open: func(ctx context.Context) (surface.Surface, error) {
			opened = true
			return e.br.NewSession(ctx)
		}})
	if err != nil {
		return nil, opened, fmt.Errorf("run: %w", err)
	}
	return rec, opened, nil
}
