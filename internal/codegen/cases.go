package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// Case is one row of a spec's data table: the inputs a test types and
// what it expects, "success" ([ExpectSuccess]: the checkpoint holds and
// every output is extracted and valid) or a business outcome's code.
type Case struct {
	Name   string            `json:"name"`
	Inputs map[string]string `json:"inputs"`
	Expect string            `json:"expect,omitempty"`
}

// Reserved keys of a --case value.
const (
	caseNameKey   = "_name"
	caseExpectKey = "_expect"
)

// ParseCase parses the --case syntax: comma-separated NAME=VALUE pairs of
// inputs, plus the reserved keys _name (the case's title) and _expect
// ("success", the default, or an outcome code). A value cannot hold a
// comma; a cases file can ([LoadCases]).
func ParseCase(s string) (Case, error) {
	k := Case{Inputs: map[string]string{}}
	if strings.TrimSpace(s) == "" {
		return k, fmt.Errorf("--case %q: want NAME=VALUE,...", s)
	}
	for _, pair := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return k, fmt.Errorf("--case %q: %q is not NAME=VALUE", s, pair)
		}
		switch name {
		case caseNameKey:
			k.Name = value
		case caseExpectKey:
			k.Expect = value
		default:
			if _, dup := k.Inputs[name]; dup {
				return k, fmt.Errorf("--case %q: input %s is given twice", s, name)
			}
			k.Inputs[name] = value
		}
	}
	return k, nil
}

// MaxCasesFile bounds a cases file.
const MaxCasesFile = 1 << 20

// LoadCases reads a cases file: a JSON array of {"name", "inputs":
// {NAME: VALUE}, "expect"}. Unknown fields are refused.
func LoadCases(path string) ([]Case, error) {
	data, err := capability.ReadBounded(path, MaxCasesFile)
	if err != nil {
		return nil, fmt.Errorf("cases file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cs []Case
	if err := dec.Decode(&cs); err != nil {
		return nil, fmt.Errorf("cases file %s: %w", path, err)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("cases file %s: no cases", path)
	}
	return cs, nil
}

// cases checks the cases against the capability (every input bound to
// its spec, expect a declared outcome) and fills names and defaults.
// Without cases, one is made of the inputs' examples.
func (g *gen) cases() ([]Case, error) {
	c := g.root
	in := g.opts.Cases
	if len(in) == 0 {
		k := Case{Name: "example", Inputs: map[string]string{}}
		for _, spec := range c.Inputs {
			if spec.Sensitive {
				continue
			}
			switch {
			case spec.Example != nil:
				k.Inputs[spec.Name] = fmt.Sprint(spec.Example)
			case spec.Default != nil || !spec.Required:
			default:
				return nil, g.refuse("input "+spec.Name, "no example to make a case of: give one (--case or --cases)")
			}
		}
		in = []Case{k}
	}
	seen := map[string]bool{}
	out := make([]Case, 0, len(in))
	for n, k := range in {
		k, err := g.bindCase(n, k)
		if err != nil {
			return nil, err
		}
		if seen[k.Name] {
			return nil, g.refuse("case "+k.Name, "two cases have this name")
		}
		seen[k.Name] = true
		out = append(out, k)
	}
	return out, nil
}

func (g *gen) bindCase(n int, k Case) (Case, error) {
	c := g.root
	where := "case " + strconv.Itoa(n+1)
	if k.Name != "" {
		where = "case " + k.Name
	}
	if k.Expect == "" {
		k.Expect = ExpectSuccess
	}
	if k.Expect != ExpectSuccess && !hasOutcome(c, k.Expect) {
		return k, g.refuse(where, "expect %q: want %s or a declared outcome code", k.Expect, ExpectSuccess)
	}
	bound := map[string]string{}
	for name, raw := range k.Inputs {
		spec := c.Input(name)
		if spec == nil {
			return k, g.refuse(where, "input %s is not declared", name)
		}
		if spec.Sensitive {
			return k, g.refuse(where, "input %s is sensitive: the test reads it from %s, never from the file", name, SecretEnv(name))
		}
		v, err := capability.CoerceInput(*spec, raw)
		if err != nil {
			return k, g.refuse(where, "input %s: %v", name, err)
		}
		bound[name] = caseValue(v)
	}
	var names []string
	for _, spec := range c.Inputs {
		if _, ok := bound[spec.Name]; ok || spec.Sensitive {
			continue
		}
		if spec.Default != nil {
			v, err := capability.CoerceInput(spec, fmt.Sprint(spec.Default))
			if err != nil {
				return k, g.refuse(where, "input %s default: %v", spec.Name, err)
			}
			bound[spec.Name] = caseValue(v)
		} else if spec.Required {
			return k, g.refuse(where, "required input %s has no value", spec.Name)
		}
	}
	for name := range k.Inputs {
		names = append(names, name+"="+bound[name])
	}
	sort.Strings(names)
	if k.Name == "" {
		k.Name = strings.Join(names, " ")
		if k.Name == "" {
			k.Name = "case " + strconv.Itoa(n+1)
		}
	}
	k.Inputs = bound
	return k, nil
}

func hasOutcome(c *domain.Capability, code string) bool {
	for _, o := range c.Outcomes {
		if o.Code == code {
			return true
		}
	}
	return false
}

// WriteFile writes data to path atomically: a temporary file in the same
// directory, synced, then renamed over path.
func WriteFile(path string, data []byte) error {
	dir, base := ".", path
	if i := strings.LastIndexAny(path, `/`); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("write spec: %w", err)
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write spec: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write spec: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write spec: %w", err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write spec: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write spec: %w", err)
	}
	return nil
}
