package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/policy"
)

// ParseInputs reads a run's inputs written NAME=VALUE. A pair without "="
// or a name given twice is refused, naming the pair.
func ParseInputs(pairs []string) (map[string]string, error) {
	in := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		if _, dup := in[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		in[k] = v
	}
	return in, nil
}

// LoadApproval reads an approval record: a JSON file of at most
// capability.MaxApprovalSize bytes that names a content hash.
func LoadApproval(path string) (*policy.Approval, error) {
	raw, err := capability.ReadBounded(path, capability.MaxApprovalSize)
	if err != nil {
		return nil, err
	}
	ap := &policy.Approval{}
	if err := json.Unmarshal(raw, ap); err != nil || ap.ContentHash == "" {
		return nil, fmt.Errorf("%s: want a JSON approval record with content_hash", path)
	}
	return ap, nil
}
