package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// Effect contracts (issue 26): a step may declare what it must leave in
// the system of record (domain.RecordWritten). Before the first step the
// engine runs each contract's read-back, a pinned read-only capability, in
// the run's session with the contract's inputs and keeps the table its
// final screen shows (the pre-read); when the run is about to end it reads
// again for every contract whose step was sent (the post-read) and judges
// the change: verified, refuted or indeterminate.

// contractRead is one contract and the table its pre-read showed.
type contractRead struct {
	sc     domain.StepContract
	before *readTable
}

// readTable is the rows of a read-back's table, each cell keyed by its
// column header.
type readTable struct {
	headers []string
	rows    []map[string]string
}

// rowCounts counts the rows matching a contract and the others.
type rowCounts struct{ matching, others int }

// preRead reads every effect contract's table before the first step and
// goes back to the entrypoint. It returns nil reads when the capability
// declares no contract; a read-back that fails ends the run before any
// step, with nothing sent.
func (r *run) preRead(ctx context.Context) ([]contractRead, *end) {
	cs := r.c.Contracts()
	if len(cs) == 0 {
		return nil, nil
	}
	reads := make([]contractRead, 0, len(cs))
	for _, sc := range cs {
		tbl, e := r.readBack(ctx, sc.Contract.RecordWritten, "pre-read")
		if e != nil {
			e.msg = fmt.Sprintf("the pre-read of step %s's effect contract (%s) failed, so its effect could not be checked; nothing was sent: %s",
				sc.Step, sc.Contract.RecordWritten.Via, e.msg)
			if e.status != domain.StatusNeedsHuman {
				e.status, e.code = domain.StatusFailed, domain.CodePrerequisiteFailed
			}
			return nil, e
		}
		reads = append(reads, contractRead{sc: sc, before: tbl})
	}
	if e := r.enter(ctx); e != nil {
		return nil, e
	}
	return reads, nil
}

// readBack runs the read-back rw names in place, in the run's session,
// with rw's inputs, from its own entrypoint, and reads the table of the
// screen it ends on.
func (r *run) readBack(ctx context.Context, rw *domain.RecordWritten, why string) (*readTable, *end) {
	if r.o.Library == nil {
		return nil, failEnd(domain.CodeCapabilityInvalid, "no capability library to run the read-back %s", rw.Via)
	}
	l, err := Resolve(r.o.Library, rw.Via, rw.ContentHash)
	if err != nil {
		return nil, errEnd(err)
	}
	if p := capability.ReadOnlyProblem(l.Capability); p != "" {
		return nil, failEnd(domain.CodeCapabilityInvalid, "the read-back %s is not read-only: %s", l.Capability.Ref(), p)
	}
	raw := map[string]string{}
	for name, v := range rw.Inputs {
		switch v.Kind() {
		case "input":
			raw[name] = fmt.Sprint(r.inputs[v.Input])
		case "literal":
			raw[name] = *v.Literal
		}
	}
	subInputs, err := capability.BindInputs(l.Capability, raw)
	if err != nil {
		return nil, failEnd(domain.CodeInputInvalid, "%s: %v", l.Capability.Ref(), err)
	}
	subCap, err := capability.BindTemplates(l.Capability, subInputs)
	if err != nil {
		return nil, failEnd(domain.CodeInputInvalid, "%s: %v", l.Capability.Ref(), err)
	}
	sub := &run{o: r.o, c: subCap, rec: r.rec, rt: r.rt, start: r.o.Now(),
		outputs: map[string]any{}, attempts: map[string]int{}, inputs: subInputs, parent: r, eff: r.eff}
	sub.o.Capability, sub.o.Park = l, nil
	disp, err := sub.dispatcher(l.Capability)
	if err != nil {
		return nil, errEnd(err)
	}
	sub.disp = disp
	r.emit("", evidence.CapabilityStarted{Capability: l.Capability.Ref(), ContentHash: l.Hash, File: filepath.Base(l.File), Why: "effect " + why})
	e := sub.enter(ctx)
	if e == nil {
		e = sub.steps(ctx, 0)
	}
	r.subDispatches += disp.Dispatches() + sub.subDispatches
	if e != nil {
		if e.status == domain.StatusBusinessOutcome {
			return nil, failEnd(domain.CodeUnexpectedState, "%s ended with outcome %s", l.Capability.Ref(), e.outcome.Code)
		}
		e.msg = l.Capability.Ref() + ": " + e.msg
		return nil, e
	}
	r.emit("", evidence.CapabilityFinished{Capability: l.Capability.Ref()})
	snap, err := r.disp.Observe(ctx)
	if err != nil {
		return nil, failEnd(domain.CodeSurfaceError, "%s: observe its screen: %v", l.Capability.Ref(), err)
	}
	tbl, err := findTable(snap, sortedMatchKeys(rw))
	if err != nil {
		return nil, failEnd(domain.CodeUnexpectedState, "%s: %v", l.Capability.Ref(), err)
	}
	return tbl, nil
}

// postRead judges, when the run is about to end with e (nil for success),
// every contract whose step was sent: it reads the table again and
// compares it with the pre-read. A refuted effect ends the run FAILED
// EFFECT_REFUTED; one that could not be read ends it NEEDS_HUMAN
// (EFFECT_UNKNOWN); a verified effect keeps e, and a run whose verified
// effect's confirmation was not read on screen still goes to a person,
// told that the system of record shows it.
func (r *run) postRead(ctx context.Context, reads []contractRead, e *end) *end {
	var refuted, unknown, verifiedUnread []string
	for _, cr := range reads {
		se := r.eff.find(cr.sc.Step)
		if se == nil || !se.Effect.Sent() {
			continue
		}
		rw := cr.sc.Contract.RecordWritten
		v := r.judge(ctx, cr)
		se.Verdict, se.Evidence = worse(se.Verdict, v.verdict), joinEvidence(se.Evidence, v.evidence)
		r.emit(cr.sc.Step, evidence.EffectReadBack{Kind: "record_written", Verdict: v.verdict, Via: rw.Via, ContentHash: rw.ContentHash,
			MatchingBefore: v.before.matching, MatchingAfter: v.after.matching, OthersBefore: v.before.others, OthersAfter: v.after.others,
			Evidence: v.evidence})
		switch v.verdict {
		case domain.EffectRefuted:
			refuted = append(refuted, fmt.Sprintf("step %s: %s", cr.sc.Step, v.lead))
		case domain.EffectIndeterminate:
			unknown = append(unknown, fmt.Sprintf("step %s (%s)", cr.sc.Step, v.evidence))
		default:
			if se.Effect == domain.EffectSentUnconfirmed {
				verifiedUnread = append(verifiedUnread, fmt.Sprintf("step %s (%s)", cr.sc.Step, v.evidence))
			}
		}
	}
	after := func(lead string) string {
		if e == nil || e.msg == "" {
			return lead
		}
		return lead + ". The run had ended: " + e.msg
	}
	switch {
	case len(refuted) > 0:
		return &end{status: domain.StatusFailed, code: domain.CodeEffectRefuted,
			msg: after("EFFECT REFUTED: " + strings.Join(refuted, "; ") + ": the system of record disagrees with the contract; do not re-run, reconcile it")}
	case len(unknown) > 0:
		return &end{status: domain.StatusNeedsHuman, code: domain.CodeEffectUnknown,
			msg: after("EFFECT INDETERMINATE: the read-back of " + strings.Join(unknown, "; ") + " could not be read: check the application before re-running")}
	case len(verifiedUnread) > 0 && e != nil:
		out := *e
		if out.status == domain.StatusFailed {
			out.status = domain.StatusNeedsHuman
		}
		out.msg = "EFFECT VERIFIED in the system of record: " + strings.Join(verifiedUnread, "; ") +
			"; its confirmation page was not read: do not re-run. " + e.msg
		return &out
	}
	return e
}

// judgement is one contract's verdict with what the read-back showed.
type judgement struct {
	verdict       domain.Effect
	before, after rowCounts
	evidence      string
	lead          string // what a refutation's message leads with
}

// judge reads cr's table again and compares it with the pre-read.
func (r *run) judge(ctx context.Context, cr contractRead) judgement {
	rw := cr.sc.Contract.RecordWritten
	if ctx.Err() != nil {
		return judgement{verdict: domain.EffectIndeterminate, evidence: rw.Via + ": the run's time was up before the read-back"}
	}
	tbl, e := r.readBack(ctx, rw, "post-read")
	if e != nil {
		return judgement{verdict: domain.EffectIndeterminate, evidence: rw.Via + " failed: " + e.msg}
	}
	want := r.matchValues(rw)
	j := judgement{before: cr.before.count(want), after: tbl.count(want)}
	j.verdict, j.lead = verdictOf(rw, j.before, j.after)
	j.evidence = fmt.Sprintf("%s: rows matching %d -> %d (expected %+d), other rows %d -> %d",
		rw.Via, j.before.matching, j.after.matching, rw.Count, j.before.others, j.after.others)
	if rw.Others != nil {
		j.evidence += fmt.Sprintf(" (expected %+d)", *rw.Others)
	}
	return j
}

// verdictOf compares the change between two reads with the contract.
func verdictOf(rw *domain.RecordWritten, before, after rowCounts) (domain.Effect, string) {
	dm, do := after.matching-before.matching, after.others-before.others
	okM, okO := dm == rw.Count, rw.Others == nil || do == *rw.Others
	if okM && okO {
		return domain.EffectVerified, ""
	}
	var parts []string
	if !okM {
		parts = append(parts, fmt.Sprintf("%s, %d expected", appeared(dm, "matching"), rw.Count))
	} else {
		parts = append(parts, appeared(dm, "matching")+" as expected")
	}
	if !okO {
		parts = append(parts, fmt.Sprintf("%s, %d expected", appeared(do, "other"), *rw.Others))
	}
	return domain.EffectRefuted, strings.Join(parts, "; ")
}

// appeared says how the number of entries of a kind changed.
func appeared(d int, kind string) string {
	noun := "entries"
	if d == 1 || d == -1 {
		noun = "entry"
	}
	if d < 0 {
		return fmt.Sprintf("%d %s %s disappeared", -d, kind, noun)
	}
	return fmt.Sprintf("%d %s %s appeared", d, kind, noun)
}

// worse returns the more severe of two verdicts ("" is none).
func worse(a, b domain.Effect) domain.Effect {
	rank := map[domain.Effect]int{"": 0, domain.EffectVerified: 1, domain.EffectIndeterminate: 2, domain.EffectRefuted: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func joinEvidence(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// matchValue is one column's expected cell: its text and whether it is
// compared as money.
type matchValue struct {
	text  string
	money bool
}

// matchValues resolves a contract's match to the texts a written row holds.
func (r *run) matchValues(rw *domain.RecordWritten) map[string]matchValue {
	out := map[string]matchValue{}
	for col, v := range rw.Match {
		var mv matchValue
		switch v.Kind() {
		case "input":
			mv.text = fmt.Sprint(r.inputs[v.Input])
			spec := r.c.Input(v.Input)
			mv.money = spec != nil && spec.Type == domain.TypeMoney
		case "output":
			mv.text = fmt.Sprint(r.outputs[v.Output])
			spec := r.c.Output(v.Output)
			mv.money = spec != nil && spec.Type == domain.TypeMoney
		case "literal":
			mv.text = *v.Literal
		}
		out[col] = mv
	}
	return out
}

func sortedMatchKeys(rw *domain.RecordWritten) []string {
	keys := make([]string, 0, len(rw.Match))
	for k := range rw.Match {
		keys = append(keys, k)
	}
	return keys
}

// count counts the rows whose every matched column holds the expected
// value, and the others.
func (t *readTable) count(want map[string]matchValue) rowCounts {
	var c rowCounts
	for _, row := range t.rows {
		if rowMatches(row, want) {
			c.matching++
		} else {
			c.others++
		}
	}
	return c
}

func rowMatches(row map[string]string, want map[string]matchValue) bool {
	for col, mv := range want {
		if !cellEquals(row[col], mv) {
			return false
		}
	}
	return true
}

// cellEquals compares a cell with an expected value after trimming; a
// money value compares as an amount ("$25.00" equals "25.00", "25").
func cellEquals(cell string, mv matchValue) bool {
	cell, want := strings.TrimSpace(cell), strings.TrimSpace(mv.text)
	if cell == want {
		return true
	}
	if !mv.money {
		return false
	}
	a, errA := MoneyIn(cell, "USD")
	b, errB := MoneyIn(want, "USD")
	if errB != nil && !strings.Contains(want, ".") {
		b, errB = MoneyIn(want+".00", "USD")
	}
	return errA == nil && errB == nil && a == b
}

// findTable reads the table (role table or grid) of snap whose column
// headers include every key. A screen without any table reads as no rows
// (an empty history shows none; the read-back's checkpoint proved the
// screen); tables of which none has those headers, or more than one that
// has, are an error.
func findTable(snap *domain.UiSnapshot, keys []string) (*readTable, error) {
	var found []*readTable
	tables := 0
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if (n.Role != "table" && n.Role != "grid") || n.States.Hidden {
			continue
		}
		tables++
		t := readTableAt(snap, i)
		if hasAll(t.headers, keys) {
			found = append(found, t)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("%d tables have the columns %s: cannot tell which to read", len(found), strings.Join(keys, ", "))
	case tables > 0:
		return nil, fmt.Errorf("no table on its screen has the columns %s", strings.Join(keys, ", "))
	}
	return &readTable{}, nil
}

func hasAll(headers, keys []string) bool {
	for _, k := range keys {
		ok := false
		for _, h := range headers {
			if strings.TrimSpace(h) == strings.TrimSpace(k) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// readTableAt reads the table rooted at snap.Nodes[root]: its column
// headers in order, and each row of cells (a row with no cell, such as
// the header row, is skipped). A nested table is not descended into.
func readTableAt(snap *domain.UiSnapshot, root int) *readTable {
	t := &readTable{}
	var rows []int
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if depth > 64 {
			return
		}
		for _, c := range snap.Nodes[i].Children {
			if c < 0 || c >= len(snap.Nodes) {
				continue
			}
			switch n := &snap.Nodes[c]; n.Role {
			case "table", "grid":
			case "columnheader":
				t.headers = append(t.headers, nodeText(snap, c))
			case "row":
				rows = append(rows, c)
				walk(c, depth+1)
			default:
				walk(c, depth+1)
			}
		}
	}
	walk(root, 0)
	for _, ri := range rows {
		var cells []string
		for _, c := range snap.Nodes[ri].Children {
			if c >= 0 && c < len(snap.Nodes) && (snap.Nodes[c].Role == "cell" || snap.Nodes[c].Role == "gridcell") {
				cells = append(cells, nodeText(snap, c))
			}
		}
		if len(cells) == 0 {
			continue
		}
		row := map[string]string{}
		for j, v := range cells {
			if j < len(t.headers) {
				row[t.headers[j]] = v
			}
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// nodeText is a node's name, or the text under it when it has none.
func nodeText(snap *domain.UiSnapshot, i int) string {
	n := &snap.Nodes[i]
	if n.Name != "" {
		return strings.Join(strings.Fields(n.Name), " ")
	}
	return strings.Join(strings.Fields(alertText(snap, n, 0)), " ")
}
