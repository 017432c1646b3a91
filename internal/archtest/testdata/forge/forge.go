// Package forge tries to make a policy.AuthorizedAction outside policy. It
// must not compile: archtest's TestAuthorizedActionCannotBeForged builds it
// and wants the compiler to refuse the unexported fields.
package forge

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

// Forged would skip the policy chokepoint.
var Forged = policy.AuthorizedAction{valid: true, action: domain.Action{}, risk: domain.Risk("safe")}
