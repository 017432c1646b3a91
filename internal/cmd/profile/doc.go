// Package profilecmd is `cua profile`: the capability profile of this
// runtime (internal/receipt.Profile), as JSON checked against its
// published schema.
//
// It holds flags, validation and printing only.
package profilecmd
