// Package schema embeds the published JSON Schemas.
package schema

import _ "embed"

// Capability is the capability schema.
//
//go:embed capability.json
var Capability []byte
