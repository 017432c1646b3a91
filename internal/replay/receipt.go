package replay

import (
	"fmt"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/receipt"
)

// writeReceipt writes the run's control-plane records into its bundle
// before the manifest is written: plan.json (the action plan), receipt.json
// and, when the run stopped at a gate, gate.json. rec is the record as
// written (redacted); the bundle redacts every document again.
func (r *run) writeReceipt(rec *domain.RunRecord) error {
	b := r.rt.Evidence
	plan, err := receipt.NewPlan(receipt.PlanInput{RunID: rec.RunID, Capability: r.c, ContentHash: rec.ContentHash,
		ReleasedGates: r.o.ReleasedGates, AllowIrreversible: r.o.AllowIrreversible, Approved: r.o.Approval != nil})
	if err != nil {
		return fmt.Errorf("run %s: %w", rec.RunID, err)
	}
	rc, gate, err := receipt.NewReceipt(receipt.RunInput{Record: rec, Capability: r.c, Plan: plan,
		UnknownModal: rec.FailureCode == domain.CodeUnexpectedState && showsModal(r.lastSnap), Screenshots: b.Screenshots()})
	if err != nil {
		return fmt.Errorf("run %s: %w", rec.RunID, err)
	}
	if err := b.WriteDocument(evidence.PlanFile, plan); err != nil {
		return err
	}
	if gate != nil {
		if err := b.WriteDocument(evidence.GateFile, gate); err != nil {
			return err
		}
	}
	return b.WriteDocument(evidence.ReceiptFile, rc)
}

// showsModal reports whether a snapshot shows a JavaScript dialog or a
// visible modal or dialog element.
func showsModal(s *domain.UiSnapshot) bool {
	if s == nil {
		return false
	}
	if s.Dialog != nil {
		return true
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !n.States.Hidden && (n.States.Modal || n.Role == domain.RoleDialog || n.Role == domain.RoleAlertDialog) {
			return true
		}
	}
	return false
}
