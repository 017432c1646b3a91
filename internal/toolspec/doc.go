// Package toolspec owns the tool definitions of approved capabilities: the
// name an agent calls a capability by, its description, the closed JSON
// Schema of its inputs (the bounds capability.BindInputs enforces, narrowed
// by the bounds of the approval that covers it), the schema of what a call
// returns, and its declared business outcomes, rendered in the shapes of
// OpenAI function tools, Anthropic Messages API tools and MCP tools.
//
// It also turns a tool call's JSON arguments into the raw inputs replay
// binds, and a finished run record into a call's structured result. It
// reads the catalog and never writes it; it never runs a capability, opens
// a surface or talks to a model or a network.
package toolspec
