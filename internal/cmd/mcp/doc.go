// Package mcpcmd is `cua mcp`: serving the catalog's approved capabilities
// as MCP tools (internal/mcpserver) over stdio or loopback HTTP.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots, authorize or dispatch actions itself.
package mcpcmd
