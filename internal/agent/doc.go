// Package agent is the discovery loop: the one place a model is allowed to be
// uncertain. It owns the OODA loop, the closed, schema-validated action
// contract, budgets, the stuck guard, the recovery ladder (RETRY → ALTERNATE
// → REPLAN → ABORT), witnesses that verify an action's effect, the
// completion audit, and the trace the recorder compiles into a capability.
// It acts through the same targeting, policy chokepoint and runtime
// dispatcher that replay uses, on a run built by runtime.NewRun.
//
// agent never decides whether an action is allowed: it asks policy what an
// action needs (Consult), asks its Approver when policy says a consent is
// needed, and hands the consent and the run's grants to policy, which
// decides and spends grants. It never reaches a surface except through
// runtime, and never sends a model anything the redactor has not seen.
package agent
