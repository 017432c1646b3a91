// Package domain holds pure types.
package domain

import "time"

// Run is a run; its clock is injected.
type Run struct {
	Started time.Time
	Timeout time.Duration
}

// NewRun stamps a run with now().
func NewRun(now func() time.Time) Run { return Run{Started: now(), Timeout: time.Second} }
