// Package replay is the deterministic engine: it owns running a sealed
// capability on a surface with no model in the loop. Inputs are validated
// before anything moves; each step observes, classifies the screen
// (declared outcomes, then recovery rules, then the step's expectation;
// anything else fails closed as UNEXPECTED_STATE), acts through the runtime
// dispatcher and waits for its postcondition. Business outcomes are
// answers, declared faults are recovered within their budget, and failures
// listed in escalation.triggers hand the run to a human (NEEDS_HUMAN). Its
// run is built by runtime.NewRun, its events are evidence's typed kinds, and
// the record Run returns is the redacted record it wrote.
//
// A run navigates to the capability's entrypoint and runs its
// prerequisites, except on a warm session (Options.Warm) of a capability
// with a reentry: when the screen the session shows is on the run's
// origin, matches no outcome, recovery rule or undeclared dialog, satisfies
// the reentry condition and the reentry step's expectation, the run starts
// at that step (event reentered); otherwise it says why (reentry_declined)
// and enters as usual. Capability validation admits a reentry only with an
// identity check judged from that step on, so a screen left by an earlier
// run is never read as this run's answer.
//
// A capability run in place (a prerequisite, or a run_capability remedy)
// judges screens with its own rules. When it fails on a screen it does not
// recognise, the screen goes back to its caller, whose outcomes and
// recovery rules judge it (a session gone right after sign-on is the
// caller's session_expired, bounded by that rule's max_attempts); only when
// none matches does its failure end the run (handback.go).
//
// replay never imports a model, an agent or a model SDK (DESIGN invariant
// 1, checked by internal/archtest), never decides whether an action is
// allowed (policy does), never dispatches except through runtime, never
// repeats a step whose effect may have landed without checking it first,
// and never returns a record a caller must still redact.
package replay
