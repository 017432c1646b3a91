// Package interventionscmd is `cua interventions`: listing the runs the
// queue handed to a person, showing one, and recording a person's verdict
// on an effect whose fate was unknown (landed, or not landed: one new
// attempt may take the run's idempotency key).
//
// It holds flags, validation and printing only; the lifecycle is package
// jobs', and it never opens a surface or dispatches an action.
package interventionscmd
