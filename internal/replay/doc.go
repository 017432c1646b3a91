// Package replay is the deterministic engine: it runs a sealed capability on
// a surface with no model in the loop. Inputs are validated before anything
// moves; each step observes, classifies the screen (declared outcomes, then
// recovery rules, then the step's expectation; anything else fails closed as
// UNEXPECTED_STATE), acts through the runtime dispatcher and waits for its
// postcondition. Business outcomes are answers, declared faults are
// recovered within their budget, and failures listed in escalation.triggers
// hand the run to a human (NEEDS_HUMAN).
//
// replay never imports a model, an agent or a model SDK (DESIGN invariant
// 1, checked by internal/archtest).
package replay
