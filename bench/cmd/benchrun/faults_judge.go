package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// The fault-model phase's verdicts on one run, judged from MemberDesk's
// ledger (GET /_control/ledger), never from cua's own report.
const (
	// verdictCorrectSuccess: cua said done and the ledger holds exactly the
	// transfer asked for, under the confirmation cua returned.
	verdictCorrectSuccess = "correct_success"
	// verdictSilentWrong: cua said done and the ledger disagrees.
	verdictSilentWrong = "silent_wrong"
	// verdictCorrectHalt: cua halted on a fault that fired and left the
	// ledger wrong, or whose screen can never show the write.
	verdictCorrectHalt = "correct_halt"
	// verdictFalseHalt: cua halted although the app did its job.
	verdictFalseHalt = "false_halt"
)

// controlClass names the no-fault control in the phase's rows.
const controlClass = "none"

// faultClasses are the phase's rows: the no-fault control, then each
// write fault of MemberDesk (internal/mockapp/writefaults.go) in the order
// a submit tries them.
var faultClasses = []string{
	controlClass,
	mockapp.FaultPartialSave,
	mockapp.FaultDuplicateSubmit,
	mockapp.FaultOptimisticThenReject,
	mockapp.FaultStaleOverwrite,
	mockapp.FaultTimeoutAfterWrite,
	mockapp.FaultLostWrite,
	mockapp.FaultResetAfterWrite,
}

// unprovableOnScreen are the faults that leave the ledger right but never
// let the screen show the write (the answer never comes): halting there,
// with the effect unconfirmed, is correct, and so is a success a read-back
// proved.
var unprovableOnScreen = map[string]bool{mockapp.FaultTimeoutAfterWrite: true}

// faultDefinitions document the verdicts, as latest.json carries them.
var faultDefinitions = []string{
	"each run: MemberDesk reset (empty ledger, no session), one fault armed to fire once (none for the control), one transfer of member 12345 Savings→Checking 25.75 on a fresh browser context, signing on first",
	"ledger right: exactly one new ledger entry, a transfer of member 12345 from Savings to Checking of 25.75 by the signed-on operator; read from GET /_control/ledger, never from cua's record",
	"cua said done: status SUCCESS or BUSINESS_OUTCOME; halted: FAILED or NEEDS_HUMAN",
	"correct success: done, the ledger right, and a SUCCESS's confirmation output is that entry's",
	"silent wrong effect: done while the ledger is not right (or the confirmation returned is not the one new entry's)",
	"correct halt: halted on a fault that fired and left the ledger wrong, or on timeout_after_write (the ledger right but the answer never came, so nothing on screen can show the write)",
	"false halt: halted on the no-fault control, or on a run whose armed fault never fired (the run is then judged as the control), or with the ledger right on a fault other than timeout_after_write",
	"intervals: Wilson score 95% (z = 1.96) on each count over the row's runs",
}

// ledgerWant is the transfer every run asks for, as the ledger writes it.
type ledgerWant struct {
	Member, From, To, Amount, Operator string
}

// faultRun is what one run told: its class, whether the armed fault fired,
// cua's record and the ledger entries it added.
type faultRun struct {
	Class        string
	Fired        bool
	Status       domain.RunStatus
	FailureCode  string
	Confirmation string
	New          []mockapp.LedgerEntry
}

// ledgerRight reports whether added is exactly the one entry want asks for.
func ledgerRight(added []mockapp.LedgerEntry, want ledgerWant) bool {
	if len(added) != 1 {
		return false
	}
	e := added[0]
	return e.Kind == "transfer" && e.Member == want.Member && e.From == want.From && e.To == want.To &&
		e.Amount == want.Amount && e.Operator == want.Operator
}

// judgeFault returns the verdict on r (see faultDefinitions) and, for any
// verdict but a correct success, why.
func judgeFault(r faultRun, want ledgerWant) (string, string) {
	right := ledgerRight(r.New, want)
	done := r.Status == domain.StatusSuccess || r.Status == domain.StatusBusinessOutcome
	effective := r.Class
	if !r.Fired {
		effective = controlClass
	}
	switch {
	case done && right && (r.Status != domain.StatusSuccess || r.Confirmation == r.New[0].Confirmation):
		return verdictCorrectSuccess, ""
	case done && right:
		return verdictSilentWrong, fmt.Sprintf("%s returned confirmation %q, the ledger's new entry is %s", r.Status, r.Confirmation, r.New[0].Confirmation)
	case done:
		return verdictSilentWrong, fmt.Sprintf("%s (confirmation %q) but the ledger added %s", r.Status, r.Confirmation, describeEntries(r.New))
	case effective == controlClass:
		why := "no fault"
		if r.Class != controlClass {
			why = r.Class + " armed but never fired"
		}
		return verdictFalseHalt, fmt.Sprintf("%s %s with %s; the ledger added %s", r.Status, r.FailureCode, why, describeEntries(r.New))
	case !right || unprovableOnScreen[effective]:
		return verdictCorrectHalt, ""
	}
	return verdictFalseHalt, fmt.Sprintf("%s %s under %s although the ledger is right", r.Status, r.FailureCode, r.Class)
}

// describeEntries prints ledger entries in one short phrase.
func describeEntries(es []mockapp.LedgerEntry) string {
	if len(es) == 0 {
		return "no entry"
	}
	out := fmt.Sprintf("%d entr", len(es))
	if len(es) == 1 {
		out += "y"
	} else {
		out += "ies"
	}
	for i, e := range es {
		sep := ": "
		if i > 0 {
			sep = ", "
		}
		out += fmt.Sprintf("%s%s %s %s→%s %s by %s", sep, e.Confirmation, e.Member, e.From, e.To, e.Amount, e.Operator)
	}
	return out
}

// interval is a Wilson score interval of a proportion, as fractions.
type interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// wilson95 returns the Wilson score 95% interval of k successes in n
// trials; n = 0 gives [0, 1].
func wilson95(k, n int) interval {
	if n <= 0 {
		return interval{0, 1}
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return interval{Low: round(math.Max(0, center-half), 4), High: round(math.Min(1, center+half), 4)}
}

// faultCount is one verdict's count over a row's runs with its interval.
type faultCount struct {
	K        int      `json:"k"`
	Interval interval `json:"wilson95"`
}

// faultRow is one class (a fault or the control) in one arm.
type faultRow struct {
	Fault          string         `json:"fault"`
	Runs           int            `json:"runs"`
	NotFired       int            `json:"not_fired"`
	CorrectSuccess faultCount     `json:"correct_success"`
	SilentWrong    faultCount     `json:"silent_wrong"`
	CorrectHalt    faultCount     `json:"correct_halt"`
	FalseHalt      faultCount     `json:"false_halt"`
	Codes          map[string]int `json:"codes,omitempty"`
	Samples        []string       `json:"samples,omitempty"`
}

// tallyRow counts judged runs of one class into a row.
func tallyRow(fault string, runs []faultRun, verdicts, whys []string) faultRow {
	row := faultRow{Fault: fault, Runs: len(runs), Codes: map[string]int{}}
	var cs, sw, ch, fh int
	for i, r := range runs {
		if !r.Fired && r.Class != controlClass {
			row.NotFired++
		}
		code := string(r.Status)
		if r.FailureCode != "" {
			code += " " + r.FailureCode
		}
		row.Codes[code]++
		switch verdicts[i] {
		case verdictCorrectSuccess:
			cs++
		case verdictSilentWrong:
			sw++
		case verdictCorrectHalt:
			ch++
		case verdictFalseHalt:
			fh++
		}
		if whys[i] != "" && len(row.Samples) < 3 && !slices.Contains(row.Samples, whys[i]) {
			row.Samples = append(row.Samples, whys[i])
		}
	}
	n := len(runs)
	row.CorrectSuccess = faultCount{cs, wilson95(cs, n)}
	row.SilentWrong = faultCount{sw, wilson95(sw, n)}
	row.CorrectHalt = faultCount{ch, wilson95(ch, n)}
	row.FalseHalt = faultCount{fh, wilson95(fh, n)}
	return row
}

// totalRow sums rows (the whole arm, control included).
func totalRow(rows []faultRow) faultRow {
	t := faultRow{Fault: "all"}
	for _, r := range rows {
		t.Runs += r.Runs
		t.NotFired += r.NotFired
		t.CorrectSuccess.K += r.CorrectSuccess.K
		t.SilentWrong.K += r.SilentWrong.K
		t.CorrectHalt.K += r.CorrectHalt.K
		t.FalseHalt.K += r.FalseHalt.K
	}
	for _, c := range []*faultCount{&t.CorrectSuccess, &t.SilentWrong, &t.CorrectHalt, &t.FalseHalt} {
		c.Interval = wilson95(c.K, t.Runs)
	}
	return t
}
