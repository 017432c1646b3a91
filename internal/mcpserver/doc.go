// Package mcpserver serves approved capabilities as MCP tools with the
// official MCP Go SDK, over stdio or streamable HTTP on loopback.
//
// It owns the tool list (the catalog's approved versions, re-read before
// every list and call), a call's path (arguments checked against the
// tool's closed input schema, then the same pipeline.Replay a `cua replay`
// runs, admitted unattended by the catalog's gate, so an unapproved or
// out-of-bounds call is refused before a session opens), the per-step
// progress notifications, the bound on concurrent sessions, and the gates
// in front of its HTTP handler: Host and Origin, then a principal's bearer
// token (checked by an injected Authenticator), whose principal owns the
// session and is logged with each call. A call's evidence and index
// entry are those of any replay.
//
// It never opens a surface itself (a front end injects the Opener), never
// authorizes or dispatches an action, never talks to a model, and never
// listens on anything but loopback.
package mcpserver
