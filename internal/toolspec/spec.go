package toolspec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// MaxNameLen is the longest tool name OpenAI, Anthropic and MCP clients
// all accept.
const MaxNameLen = 64

// NamePattern is the tool-name charset the providers accept.
var NamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Spec is the tool definition of one approved capability version.
type Spec struct {
	// Name is the tool name (see [Name]).
	Name string
	// Capability is "id@version", ContentHash the sealed hash it runs.
	Capability  string
	ContentHash string
	Title       string
	// Description is the text an agent reads: what the capability does,
	// what it returns and its business outcomes.
	Description string
	// InputSchema is the closed JSON Schema (2020-12) of the arguments.
	InputSchema map[string]any
	// OutputSchema is the JSON Schema of a call's structured result
	// ([Result]).
	OutputSchema map[string]any
	Outcomes     []Outcome
	// Loaded is the capability the tool runs.
	Loaded *capability.Loaded

	compile    sync.Once
	compiled   *jsonschema.Schema
	compileErr error
}

// Outcome is one declared business outcome: an answer, not an error.
type Outcome struct {
	Code        string `json:"code"`
	Description string `json:"description,omitempty"`
}

// Name turns a capability id into a tool name: every character outside
// [a-zA-Z0-9_-] becomes '_'; an id longer than [MaxNameLen] keeps its
// first 55 characters and ends in '_' and 8 hex digits of its sha256, so
// two long ids stay apart.
func Name(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	n := b.String()
	if len(n) > MaxNameLen {
		sum := sha256.Sum256([]byte(id))
		n = n[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return n
}

// New builds the spec of l, narrowed by the approvals that cover it (see
// [InputSchema]).
func New(l *capability.Loaded, approvals []store.Approval) (*Spec, error) {
	cp := l.Capability
	name := Name(cp.ID)
	if !NamePattern.MatchString(name) {
		return nil, fmt.Errorf("%s: tool name %q is not valid", cp.Ref(), name)
	}
	in, err := InputSchema(cp, approvals)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cp.Ref(), err)
	}
	s := &Spec{Name: name, Capability: cp.Ref(), ContentHash: l.Hash, Title: cp.Title,
		InputSchema: in, OutputSchema: OutputSchema(cp), Loaded: l}
	for _, o := range cp.Outcomes {
		s.Outcomes = append(s.Outcomes, Outcome{Code: o.Code, Description: o.Description})
	}
	s.Description = describe(cp)
	return s, nil
}

// CheckNames refuses two specs with one tool name, naming both
// capabilities, and sorts specs by name.
func CheckNames(specs []*Spec) error {
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	for i := 1; i < len(specs); i++ {
		if specs[i].Name == specs[i-1].Name {
			return fmt.Errorf("tool name %q is taken by both %s and %s: export one of them", specs[i].Name, specs[i-1].Capability, specs[i].Capability)
		}
	}
	return nil
}

// describe is the description an agent reads.
func describe(cp *domain.Capability) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(cp.Title))
	if d := strings.Join(strings.Fields(cp.Description), " "); d != "" {
		b.WriteString(". " + d)
	}
	if len(cp.Outputs) > 0 {
		b.WriteString("\nReturns outputs: ")
		for i, o := range cp.Outputs {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%s)", o.Name, o.Type)
			if o.Description != "" {
				b.WriteString(": " + sentence(o.Description))
			}
		}
		b.WriteString(".")
	}
	if len(cp.Outcomes) > 0 {
		b.WriteString("\nBusiness outcomes (a normal answer with status BUSINESS_OUTCOME, not an error): ")
		for i, o := range cp.Outcomes {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(o.Code)
			if o.Description != "" {
				b.WriteString(": " + sentence(o.Description))
			}
		}
		b.WriteString(".")
	}
	return b.String()
}

// sentence is d on one line without its closing period.
func sentence(d string) string {
	return strings.TrimRight(strings.Join(strings.Fields(d), " "), ".")
}
