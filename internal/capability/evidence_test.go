package capability_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// TestEvidenceField: the evidence field is sealed (full hashes apart from
// the same capability without it), absent leaves the hash as it was
// (decisive is the default, never written into the canonical form), and
// a value other than decisive or full is refused naming the field.
func TestEvidenceField(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "base.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(raw), "\ncontent_hash:", "\n#content_hash:", 1)
	parse := func(extra string) (*capability.Loaded, error) {
		return capability.Parse("x.yaml", []byte(base+extra))
	}
	plain, err := parse("")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Capability.Evidence != "" || strings.Contains(mustCanonical(t, plain.Capability), `"evidence"`) {
		t.Errorf("absent evidence entered the canonical form")
	}
	full, err := parse("evidence: full\n")
	if err != nil {
		t.Fatal(err)
	}
	if full.Capability.Evidence != domain.EvidenceFull || full.Hash == plain.Hash {
		t.Errorf("evidence: full = %q, hash %s (without: %s): want it sealed", full.Capability.Evidence, full.Hash, plain.Hash)
	}
	for _, bad := range []string{"none", "most"} {
		_, err := parse("evidence: " + bad + "\n")
		var inv *capability.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), "evidence: value must be one of") {
			t.Errorf("evidence: %s: %v, want a problem naming the field", bad, err)
		}
	}
}

func mustCanonical(t *testing.T, c *domain.Capability) string {
	t.Helper()
	b, err := capability.Canonical(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
