package domain

// EffectContract is what an elevated or irreversible step must leave behind
// in the system of record, checked by a read-back after the step (issue 26):
// a pinned, read-only capability run in the same session with no model.
// Exactly one kind is set.
type EffectContract struct {
	RecordWritten *RecordWritten `json:"record_written,omitempty"`
}

// RecordWritten says a step writes Count matching rows to a table a
// read-back capability shows. The engine reads that table before the first
// step (the pre-read) and again when the run ends (the post-read) and
// compares the number of rows matching Match, and of rows that do not.
type RecordWritten struct {
	// Via is the read-back capability, "id@version"; ContentHash pins it
	// (written by seal like a prerequisite's pin).
	Via         string `json:"via"`
	ContentHash string `json:"content_hash,omitempty"`
	// Inputs are the read-back's inputs: $input of the caller or literals.
	Inputs map[string]ValueExpr `json:"inputs,omitempty"`
	// Match maps a column header of the read-back's final screen table to
	// the value a written row holds there ($input, $output or literal).
	Match map[string]ValueExpr `json:"match"`
	// Count is the expected change in the number of matching rows between
	// the pre-read and the post-read.
	Count int `json:"count"`
	// Others, when set, is the expected change in the number of rows that
	// do not match (0 catches another writer's entry in between).
	Others *int `json:"others,omitempty"`
}

// Verdicts of an effect contract's read-back, recorded in StepEffect.Verdict.
const (
	// EffectVerified: the read-back shows exactly the contracted change.
	EffectVerified Effect = "verified"
	// EffectRefuted: the read-back was read and shows a different change.
	EffectRefuted Effect = "refuted"
	// EffectIndeterminate: the read-back could not be read (it failed, its
	// screen was unknown or its table missing).
	EffectIndeterminate Effect = "indeterminate"
)

// CodeEffectRefuted: a step's effect contract was read back and the system
// of record shows a different change than the contract declares. Such a
// run is never retried.
const CodeEffectRefuted FailureCode = "EFFECT_REFUTED"

// Contracts returns the effect contracts of every step of c, in step order,
// with the id of the step declaring each.
func (c *Capability) Contracts() []StepContract {
	var out []StepContract
	for i := range c.Steps {
		for j := range c.Steps[i].Effects {
			out = append(out, StepContract{Step: c.Steps[i].ID, Index: j, Contract: &c.Steps[i].Effects[j]})
		}
	}
	return out
}

// StepContract is one effect contract with the step declaring it.
type StepContract struct {
	Step     string
	Index    int
	Contract *EffectContract
}
