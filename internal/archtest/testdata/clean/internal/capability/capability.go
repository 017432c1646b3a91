// Package capability loads capabilities.
package capability

import (
	"example.com/clean/internal/domain"
	"example.com/clean/schema"
)

// Schema is the embedded schema.
var Schema = schema.Capability

// Run is a domain run.
type Run = domain.Run
