// Package agent is the discovery loop: the one place a model is allowed to be
// uncertain. It observes a surface, asks a model for one turn of a closed,
// schema-validated action contract, guards the action by autonomy level,
// acts through the same targeting, policy chokepoint and runtime dispatcher
// that replay uses, verifies the result with independent witnesses, recovers
// with a bounded ladder (RETRY → ALTERNATE → REPLAN → ABORT), stops a stuck
// model, enforces budgets between steps, audits a claimed success, and
// records a trace the recorder compiles into a capability.
package agent
