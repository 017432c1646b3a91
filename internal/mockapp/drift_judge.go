package mockapp

import (
	"slices"
	"strings"
)

// Judging a replay of the reference lookup (member 12345, the capability
// memberdesk.savings_balance) on a drift variant. The bench's drift phase
// and the reduced drift run of the e2e tests share it.

// Verdicts JudgeDrift returns.
const (
	// VerdictOK: a benign variant answered the fixture's values, or a
	// semantic one halted with one of its change's right codes.
	VerdictOK = "ok"
	// VerdictFalseHalt: a benign variant halted (NEEDS_HUMAN or FAILED)
	// with nothing answered. Safe, but a miss worth reporting.
	VerdictFalseHalt = "benign_failed"
	// VerdictHaltedOtherCode: a semantic variant halted with a code
	// outside its change's right codes. Safe, but reported.
	VerdictHaltedOtherCode = "halted_other_code"
	// VerdictSilentWrong: a wrong answer or a wrong control touched. It
	// must never happen.
	VerdictSilentWrong = "silent_wrong"
)

// Run statuses and failure codes as the replay engine's run record spells
// them (domain.RunStatus and domain.FailureCode; mockapp imports nothing
// of the module).
const (
	runSuccess         = "SUCCESS"
	runBusinessOutcome = "BUSINESS_OUTCOME"
	runNeedsHuman      = "NEEDS_HUMAN"
	runFailed          = "FAILED"
)

// DriftLookupWant is what a correct lookup of member 12345 returns, in the
// capability's canonical output forms.
var DriftLookupWant = map[string]string{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}

// DriftRightCodes maps each family (prefix) of semantic change to the
// failure codes that are a correct halt: a renamed or removed target is
// not found (or a postcondition that names it does not hold), a duplicated
// one is ambiguous, a moved value is not a money amount (or its row no
// longer has one value cell), another currency is not a US dollar amount.
var DriftRightCodes = map[string][]string{
	"rename_":      {"TARGET_NOT_FOUND", "UNEXPECTED_STATE", "CHECKPOINT_FAILED"},
	"remove_":      {"TARGET_NOT_FOUND", "UNEXPECTED_STATE", "CHECKPOINT_FAILED"},
	"duplicate_":   {"TARGET_AMBIGUOUS"},
	"moved_value_": {"OUTPUT_INVALID", "TARGET_NOT_FOUND", "TARGET_AMBIGUOUS"},
	"currency_":    {"OUTPUT_INVALID"},
}

// DriftCodesFor returns the right halt codes of a semantic change, or nil.
func DriftCodesFor(change string) []string {
	for prefix, codes := range DriftRightCodes {
		if strings.HasPrefix(change, prefix) {
			return codes
		}
	}
	return nil
}

// DriftRun is one replay of the reference lookup on a drift variant.
type DriftRun struct {
	Kind        string            // DriftBenign or DriftSemantic
	Change      string            // the semantic or named benign change, if any
	Status      string            // the run record's status, e.g. "SUCCESS"
	FailureCode string            // the run record's failure code, if any
	Outputs     map[string]string // the run's outputs, formatted with fmt's %v
	DecoyHits   int               // decoy hits the app counted during the run
}

// DriftExpected says what a right replay of a variant of kind and change
// does, for reports.
func DriftExpected(kind, change string) string {
	if kind == DriftBenign {
		return "SUCCESS savings_balance=" + DriftLookupWant["savings_balance"] + " status=" + DriftLookupWant["status"] + " as_of=" + DriftLookupWant["as_of"]
	}
	return "halt (NEEDS_HUMAN or FAILED) with " + strings.Join(DriftCodesFor(change), " or ")
}

// JudgeDrift returns the verdict of one replay. A decoy hit is always
// silent wrong. On a benign variant, any answer other than SUCCESS with the
// fixture's outputs is silent wrong, and a halt is a false halt. On a
// semantic variant, any answer (SUCCESS or a business outcome) or any
// output is silent wrong; a halt is ok with a right code.
func JudgeDrift(r DriftRun) string {
	answered := r.Status == runSuccess || r.Status == runBusinessOutcome
	halted := r.Status == runNeedsHuman || r.Status == runFailed
	if r.DecoyHits > 0 {
		return VerdictSilentWrong
	}
	if r.Kind == DriftBenign {
		switch {
		case answered && (r.Status != runSuccess || !sameOutputs(r.Outputs, DriftLookupWant)):
			return VerdictSilentWrong
		case r.Status == runSuccess:
			return VerdictOK
		}
		return VerdictFalseHalt
	}
	switch {
	case answered, len(r.Outputs) > 0:
		return VerdictSilentWrong
	case halted && slices.Contains(DriftCodesFor(r.Change), r.FailureCode):
		return VerdictOK
	}
	return VerdictHaltedOtherCode
}

// sameOutputs reports whether got holds want's outputs (extra outputs are
// ignored; the lookup declares exactly these three).
func sameOutputs(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
