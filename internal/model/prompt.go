package model

import (
	"encoding/json"
	"strings"
)

// UserPrompt renders everything a model reads besides the system
// instruction as one user message: the goal, the context lines, the
// observation and, when set, the corrective. The HTTP adapters send it
// beside [Request.System]; the screenshot and the contract travel in
// their own wire fields.
func UserPrompt(req Request) string {
	var b strings.Builder
	b.WriteString("Goal:\n")
	b.WriteString(req.Goal)
	if len(req.Context) > 0 {
		b.WriteString("\n\nContext:")
		for _, c := range req.Context {
			b.WriteString("\n- ")
			b.WriteString(c)
		}
	}
	b.WriteString("\n\nObservation:\n")
	b.WriteString(req.Observation)
	if req.Corrective != "" {
		b.WriteString("\n\nCorrection:\n")
		b.WriteString(req.Corrective)
	}
	return b.String()
}

// TurnFromText returns a model's text answer as a turn. Surrounding
// whitespace is dropped and a single Markdown code fence around valid JSON
// (```json … ```) is removed; anything else, valid JSON or not, is returned
// as it is for the caller's validation to judge.
func TurnFromText(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if body, ok := strings.CutPrefix(t, "```"); ok {
		if inner, ok := strings.CutSuffix(body, "```"); ok {
			// Drop the info string ("json") on the opening line.
			if nl := strings.IndexByte(inner, '\n'); nl >= 0 {
				inner = strings.TrimSpace(inner[nl+1:])
				if json.Valid([]byte(inner)) {
					return json.RawMessage(inner)
				}
			}
		}
	}
	return json.RawMessage(t)
}
