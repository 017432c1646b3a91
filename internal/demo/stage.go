package demo

import (
	"fmt"

	"github.com/cuahq/cua/internal/domain"
)

// Stage is one case of the story and what it must produce. Its JSON shape
// is part of `cua demo --json`.
type Stage struct {
	// Name says what the stage shows; Capability is the id it replays.
	Name       string            `json:"name"`
	Capability string            `json:"capability"`
	Inputs     map[string]string `json:"inputs,omitempty"`
	// Fault is armed before the run: it lets FaultAfter eligible requests
	// through, then fires FaultCount times (-1 forever).
	Fault      string `json:"fault,omitempty"`
	FaultCount int    `json:"fault_count,omitempty"`
	FaultAfter int    `json:"fault_after,omitempty"`
	// Variant is the UI variant the app serves ("" keeps a).
	Variant string `json:"variant,omitempty"`
	// Gates, Irrev and Approve release gates, allow irreversible steps and
	// have the demo approve the exact content it runs.
	Gates   []string `json:"released_gates,omitempty"`
	Irrev   bool     `json:"allow_irreversible,omitempty"`
	Approve bool     `json:"approved,omitempty"`

	// The expectations. WantLedger is the number of ledger entries after
	// the run; WantNoNotice asks that the undeclared dialog stay unclicked.
	WantStatus     domain.RunStatus   `json:"want_status"`
	WantCode       domain.FailureCode `json:"want_failure_code,omitempty"`
	WantOutcome    string             `json:"want_outcome,omitempty"`
	WantOutputs    map[string]string  `json:"want_outputs,omitempty"`
	WantRecoveries int                `json:"want_recovery_attempts"`
	WantDispatches int                `json:"want_dispatches"` // -1: any
	WantLedger     int                `json:"want_ledger_entries"`
	WantNoNotice   bool               `json:"want_notice_untouched,omitempty"`
}

// lookupCap is the reference lookup most stages replay.
const lookupCap = "memberdesk.savings_balance"

// Stages returns the replay stages of the story, in order: a fresh copy
// the caller may change.
func Stages() []Stage {
	member := func(id string) map[string]string { return map[string]string{"member_id": id} }
	return []Stage{
		{Name: "reference lookup", Capability: lookupCap, Inputs: member("12345"), WantStatus: domain.StatusSuccess,
			WantOutputs: map[string]string{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}, WantDispatches: -1},
		{Name: "member not found", Capability: lookupCap, Inputs: member("99999"), WantStatus: domain.StatusBusinessOutcome,
			WantOutcome: "member_not_found", WantDispatches: -1},
		{Name: "closed account, zero balance", Capability: lookupCap, Inputs: member("23456"), WantStatus: domain.StatusSuccess,
			WantOutputs: map[string]string{"savings_balance": "0.00", "status": "Closed"}, WantDispatches: -1},
		{Name: "transient 502, recovered", Capability: lookupCap, Inputs: member("12345"), Fault: "transient_load", FaultCount: 1,
			WantStatus: domain.StatusSuccess, WantRecoveries: 1, WantOutputs: map[string]string{"savings_balance": "1234.56"}, WantDispatches: -1},
		{Name: "transient 502 past budget", Capability: lookupCap, Inputs: member("12345"), Fault: "transient_load", FaultCount: -1,
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeRecoveryExhausted, WantRecoveries: 1, WantDispatches: -1},
		{Name: "malformed input", Capability: lookupCap, Inputs: member("12a45"), WantStatus: domain.StatusFailed,
			WantCode: domain.CodeInputInvalid, WantDispatches: 0},
		{Name: "session expired, re-signed on", Capability: lookupCap, Inputs: member("12345"), Fault: "session_timeout", FaultCount: 1, FaultAfter: 1,
			WantStatus: domain.StatusSuccess, WantRecoveries: 1, WantOutputs: map[string]string{"savings_balance": "1234.56"}, WantDispatches: -1},
		{Name: "undeclared dialog, not clicked", Capability: lookupCap, Inputs: member("12345"), Fault: "undeclared_dialog", FaultCount: 1,
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeUnexpectedState, WantNoNotice: true, WantDispatches: -1},
		{Name: "variant b: every CSS hint dead", Capability: lookupCap, Inputs: member("12345"), Variant: "b",
			WantStatus: domain.StatusSuccess, WantOutputs: map[string]string{"savings_balance": "1234.56"}, WantDispatches: -1},
		{Name: "renamed label fails closed", Capability: lookupCap, Inputs: member("12345"), Variant: "c",
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeTargetNotFound, WantDispatches: -1},
		{Name: "transfer stops at its gate", Capability: "memberdesk.transfer_funds",
			Inputs:     map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeGateReached, WantDispatches: -1},
		{Name: "transfer without approval refused", Capability: "memberdesk.transfer_funds", Gates: []string{"submit"}, Irrev: true,
			Inputs:     map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			WantStatus: domain.StatusFailed, WantCode: domain.CodeApprovalRequired, WantDispatches: -1},
		{Name: "approved transfer posts once", Capability: "memberdesk.transfer_funds", Gates: []string{"submit"}, Irrev: true, Approve: true,
			Inputs:     map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			WantStatus: domain.StatusSuccess, WantOutputs: map[string]string{"confirmation": "TRF-0001"}, WantLedger: 1, WantDispatches: -1},
	}
}

// Operator and Password sign on to the in-process mock app. They are
// secrets to the engine: resolved only inside dispatch, redacted everywhere.
const (
	Operator = "OP1001"
	Password = "teller-pass-1"
)

// secrets resolves the demo's credential references.
type secrets map[string]string

func (m secrets) Secret(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set", ref)
}

func demoSecrets() secrets {
	return secrets{"corebank_operator": Operator, "corebank_password": Password}
}
