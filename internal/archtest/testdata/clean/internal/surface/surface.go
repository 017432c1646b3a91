// Package surface is the surface port.
package surface

import "example.com/clean/internal/policy"

// Surface acts on an application.
type Surface interface {
	Dispatch(policy.AuthorizedAction) error
}
