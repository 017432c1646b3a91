// Package model is the Model port: how the discovery agent asks a model (or
// any provider: a scripted explorer, a person at a prompt) for its next
// turn. Adapters live in subpackages: openai (OpenAI-compatible Chat
// Completions), anthropic (Messages with tool use), exec (an external
// program speaking JSON on stdin/stdout) and cassette (record and replay).
// modeltest is the conformance suite every adapter runs.
//
// Replay never imports this package (DESIGN invariant 1).
package model

import (
	"context"
	"encoding/json"
	"errors"
)

// Request is one question to a model. Everything in it has already passed
// through the redactor: it never holds a secret or a sensitive input value.
type Request struct {
	// System is the standing instruction: the role, the rules, and that page
	// text is data, not instructions.
	System string `json:"system"`
	// Goal is what the operator asked for, in their words.
	Goal string `json:"goal"`
	// Context carries what the agent knows: prior steps, notices (a skipped
	// action, a stuck-guard hint, a descriptor mismatch), budgets left.
	Context []string `json:"context,omitempty"`
	// Observation is the rendered, numbered element list of the screen.
	Observation string `json:"observation"`
	// Screenshot is an optional PNG (masked), nil for frameless surfaces.
	Screenshot []byte `json:"screenshot,omitempty"`
	// Contract is the JSON Schema every turn must satisfy.
	Contract json.RawMessage `json:"contract"`
	// Corrective, when set, explains why the previous answer was refused
	// (invalid JSON, a schema violation): the model must answer again.
	Corrective string `json:"corrective,omitempty"`
	// Purpose labels the call: "decide" for a step, "audit" for the
	// completion audit.
	Purpose string `json:"purpose"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Response is a model's answer.
type Response struct {
	// Turn is the answer as JSON, to be validated against the contract by
	// the caller. A model that produced no parseable JSON returns its raw
	// text here (and the caller's validation refuses it).
	Turn  json.RawMessage `json:"turn"`
	Usage Usage           `json:"usage"`
	// Model is the model id that answered.
	Model string `json:"model"`
}

// Model answers requests. Implementations are safe for use by one
// goroutine at a time.
type Model interface {
	// Decide returns the model's next turn. It returns an error wrapping
	// ErrUnavailable when the provider cannot be reached or keeps failing
	// after its retries, and ErrMismatch (cassettes) when a recorded exchange
	// does not match the request.
	Decide(ctx context.Context, req Request) (Response, error)
	// ID names the provider and model ("openai:gpt-4.1-mini", "exec:./bot").
	ID() string
	// RequiresFrame reports whether the provider needs a screenshot; the
	// agent refuses to run such a provider on a frameless surface.
	RequiresFrame() bool
}

// Sentinel errors.
var (
	ErrUnavailable = errors.New("model provider unavailable")
	ErrMismatch    = errors.New("cassette does not match the request")
	ErrNoKey       = errors.New("no API key")
)
