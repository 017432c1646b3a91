// Package surface is the surface port.
package surface

// Surface acts on an application.
type Surface interface{ Dispatch(action string) error }
