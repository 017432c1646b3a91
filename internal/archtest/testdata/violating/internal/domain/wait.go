package domain

import clock "time"

// Wait sleeps through an aliased import.
func Wait() { clock.Sleep(clock.Millisecond) }
