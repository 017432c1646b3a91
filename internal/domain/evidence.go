package domain

import (
	"fmt"
	"strings"
)

// EvidenceLevel is how many masked screenshots a run keeps (the
// capability's evidence field, raised per run by --evidence-level). Whatever the
// level, every step records the digest of its redacted observation in the
// signed event chain.
type EvidenceLevel string

// Evidence levels, lowest first.
const (
	// EvidenceNone keeps no screenshot except the screen a run stopped on
	// when it did not end SUCCESS (and the screens around an elevated or
	// irreversible dispatch, which a read-only run never makes). Only a
	// run of a read-only capability (ReadOnly) may ask for it; a
	// capability cannot declare it.
	EvidenceNone EvidenceLevel = "none"
	// EvidenceDecisive, the default, keeps the screens that prove
	// something: each output's, before and after each elevated or
	// irreversible dispatch, every halt, park and failure, and the final
	// screen.
	EvidenceDecisive EvidenceLevel = "decisive"
	// EvidenceFull keeps a screenshot after every step as well.
	EvidenceFull EvidenceLevel = "full"
)

// Rank orders evidence levels; "" is the default, decisive.
func (l EvidenceLevel) Rank() int {
	switch l {
	case EvidenceNone:
		return 0
	case EvidenceFull:
		return 2
	}
	return 1
}

// ParseEvidenceLevel reads a level as a person writes it (--evidence-level):
// none, decisive or full; "" is "" (no override).
func ParseEvidenceLevel(s string) (EvidenceLevel, error) {
	switch l := EvidenceLevel(strings.ToLower(strings.TrimSpace(s))); l {
	case "", EvidenceNone, EvidenceDecisive, EvidenceFull:
		return l, nil
	}
	return "", fmt.Errorf("evidence level %q: want none, decisive or full", s)
}

// ReadOnly reports whether a run of c cannot change anything on its
// own: no step (loop steps included) above safe risk, none gated, none
// with an effect contract, and the capability's own risk safe. Only such
// a capability may run with EvidenceNone.
func (c *Capability) ReadOnly() bool {
	if c.Risk.Rank() > RiskSafe.Rank() {
		return false
	}
	var walk func([]Step) bool
	walk = func(steps []Step) bool {
		for i := range steps {
			st := &steps[i]
			if st.Risk.Rank() > RiskSafe.Rank() || st.Gate || len(st.Effects) > 0 {
				return false
			}
			if st.ForEach != nil && !walk(st.ForEach.Steps) {
				return false
			}
		}
		return true
	}
	return walk(c.Steps)
}

// EvidenceFor is the level a run of c keeps: the higher of c's declared
// level (decisive when absent) and override (a run's --evidence-level;
// "" none), except that override none lowers it to none, which only a
// read-only capability (ReadOnly) that does not seal full allows; for any
// other the error names --evidence-level.
func (c *Capability) EvidenceFor(override EvidenceLevel) (EvidenceLevel, error) {
	declared := c.Evidence
	if declared == "" {
		declared = EvidenceDecisive
	}
	switch override {
	case "":
		return declared, nil
	case EvidenceNone:
		if declared == EvidenceFull {
			return "", Errorf(CodePolicyDenied, "--evidence-level none: %s seals evidence: full, which its approval covers; a run may raise "+
				"a capability's evidence, never lower it", c.Ref())
		}
		if !c.ReadOnly() {
			return "", Errorf(CodePolicyDenied, "--evidence-level none: %s is not read-only (a step above safe risk, gated or with an effect contract), "+
				"so its decisive screens are always kept; use --evidence-level decisive or full", c.Ref())
		}
		return EvidenceNone, nil
	case EvidenceDecisive, EvidenceFull:
		if override.Rank() > declared.Rank() {
			return override, nil
		}
		return declared, nil
	}
	return "", Errorf(CodeInputInvalid, "--evidence-level %q: want none, decisive or full", override)
}

// String returns the level as written ("" when unset).
func (l EvidenceLevel) String() string { return string(l) }

// Set parses s (ParseEvidenceLevel) into l, so a command binds a level as
// a flag (pflag.Value).
func (l *EvidenceLevel) Set(s string) error {
	v, err := ParseEvidenceLevel(s)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Type names the flag's value in help text.
func (l *EvidenceLevel) Type() string { return "none|decisive|full" }
