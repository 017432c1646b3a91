package demo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// checkRecord compares a run's record with the stage's expectation and
// returns the first difference ("" when there is none): status, failure
// code, outcome, recoveries, dispatches, then outputs in name order.
func checkRecord(st Stage, rec *domain.RunRecord) string {
	switch {
	case rec.Status != st.WantStatus:
		return fmt.Sprintf("status %s (%s: %s), want %s", rec.Status, rec.FailureCode, rec.Message, st.WantStatus)
	case rec.FailureCode != st.WantCode:
		return fmt.Sprintf("failure code %q (%s), want %q", rec.FailureCode, rec.Message, st.WantCode)
	case rec.Outcome != st.WantOutcome:
		return fmt.Sprintf("outcome %q, want %q", rec.Outcome, st.WantOutcome)
	case rec.RecoveryAttempts != st.WantRecoveries:
		return fmt.Sprintf("recovery attempts %d, want %d", rec.RecoveryAttempts, st.WantRecoveries)
	case st.WantDispatches >= 0 && rec.DispatchCount != st.WantDispatches:
		return fmt.Sprintf("dispatches %d, want %d", rec.DispatchCount, st.WantDispatches)
	}
	names := make([]string, 0, len(st.WantOutputs))
	for k := range st.WantOutputs {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if got := fmt.Sprint(rec.Outputs[k]); got != st.WantOutputs[k] {
			return fmt.Sprintf("output %s = %q, want %q", k, got, st.WantOutputs[k])
		}
	}
	return ""
}

// detail summarises a record on one line: outcome, failure code, the
// confirmation or balance it extracted, recoveries, dispatches and drift.
func detail(r *domain.RunRecord) string {
	var parts []string
	if r.Outcome != "" {
		parts = append(parts, "outcome="+r.Outcome)
	}
	if r.FailureCode != "" {
		parts = append(parts, "code="+string(r.FailureCode))
	}
	if v, ok := r.Outputs["confirmation"]; ok {
		parts = append(parts, fmt.Sprintf("confirmation=%v", v))
	}
	if v, ok := r.Outputs["savings_balance"]; ok {
		parts = append(parts, fmt.Sprintf("balance=%v status=%v", v, r.Outputs["status"]))
	}
	parts = append(parts, fmt.Sprintf("recoveries=%d dispatches=%d drift=%.2f", r.RecoveryAttempts, r.DispatchCount, r.DriftScore))
	return strings.Join(parts, " ")
}
