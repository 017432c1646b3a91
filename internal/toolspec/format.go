package toolspec

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/cuahq/cua/internal/domain"
)

// Format is a tool-definition shape.
type Format string

// Formats.
const (
	// FormatOpenAI is a Chat Completions function tool:
	// {"type":"function","function":{"name","description","parameters"}}.
	FormatOpenAI Format = "openai"
	// FormatAnthropic is a Messages API tool: {"name","description","input_schema"}.
	FormatAnthropic Format = "anthropic"
	// FormatMCP is an MCP Tool: {"name","title","description","inputSchema","outputSchema","annotations","_meta"}.
	FormatMCP Format = "mcp"
)

// Formats lists every format, in order.
var Formats = []Format{FormatOpenAI, FormatAnthropic, FormatMCP}

// ParseFormat parses a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("format %q: want openai, anthropic or mcp", s)
}

// OpenAITool is a Chat Completions function tool.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an [OpenAITool].
type OpenAIFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// AnthropicTool is a Messages API client tool.
type AnthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// MCPTool is an MCP tool definition (protocol revision 2025-06-18).
type MCPTool struct {
	Name         string         `json:"name"`
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  MCPAnnotations `json:"annotations"`
	Meta         map[string]any `json:"_meta"`
}

// MCPAnnotations are an MCP tool's behaviour hints.
type MCPAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// OpenAI is s as an OpenAI function tool.
func (s *Spec) OpenAI() OpenAITool {
	return OpenAITool{Type: "function", Function: OpenAIFunction{Name: s.Name, Description: s.Description, Parameters: s.InputSchema}}
}

// Anthropic is s as an Anthropic tool.
func (s *Spec) Anthropic() AnthropicTool {
	return AnthropicTool{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}
}

// MCP is s as an MCP tool. Its _meta carries the capability, its content
// hash and its business outcomes under "cua/…" keys.
func (s *Spec) MCP() MCPTool {
	risk := domain.RiskSafe
	if s.Loaded != nil {
		risk = s.Loaded.Capability.Risk
	}
	destructive, open := risk == domain.RiskIrreversible, false
	outcomes := s.Outcomes
	if outcomes == nil {
		outcomes = []Outcome{}
	}
	return MCPTool{Name: s.Name, Title: s.Title, Description: s.Description, InputSchema: s.InputSchema, OutputSchema: s.OutputSchema,
		Annotations: MCPAnnotations{Title: s.Title, ReadOnlyHint: risk == domain.RiskSafe, DestructiveHint: &destructive,
			IdempotentHint: risk == domain.RiskSafe, OpenWorldHint: &open},
		Meta: map[string]any{"cua/capability": s.Capability, "cua/content_hash": s.ContentHash, "cua/outcomes": outcomes}}
}

// Write writes specs as one indented JSON array in format f.
func Write(w io.Writer, f Format, specs []*Spec) error {
	var doc []any
	for _, s := range specs {
		switch f {
		case FormatOpenAI:
			doc = append(doc, s.OpenAI())
		case FormatAnthropic:
			doc = append(doc, s.Anthropic())
		case FormatMCP:
			doc = append(doc, s.MCP())
		default:
			return fmt.Errorf("format %q: want openai, anthropic or mcp", f)
		}
	}
	if doc == nil {
		doc = []any{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
