package heal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

func loadLookup(t *testing.T) *capability.Loaded {
	t.Helper()
	l, err := capability.LoadContext(t.Context(), filepath.Join("..", "..", "examples", "capabilities", "memberdesk.savings_balance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDiffQuarantinesWhatChanges: a draft that changes only a locator
// field is clean; one that changes an output's anchor, a risk, an effect
// or an identity check is refused, naming the field.
func TestDiffQuarantinesWhatChanges(t *testing.T) {
	base := loadLookup(t).Capability
	tests := []struct {
		name    string
		edit    func(c *domain.Capability)
		path    string // the one changed field (besides version and hash)
		refused string // a substring of the refusal, "" when allowed
	}{
		{"a renamed button", func(c *domain.Capability) { c.Step("search").Target.Name.Value = "Look up" },
			"steps[search].target.name.value", ""},
		{"an ordinal", func(c *domain.Capability) { one := 2; c.Step("search").Target.Ordinal = &one },
			"steps[search].target.ordinal", ""},
		{"a scope", func(c *domain.Capability) { c.Step("search").Target.Scope.Region = "Member Search" },
			"steps[search].target.scope.region", ""},
		{"an output's anchor value", func(c *domain.Capability) { c.Step("read_balance").Target.Anchor.Text = "Available Balance" },
			"steps[read_balance].target.anchor.text", "which value output savings_balance reads"},
		{"a step's risk", func(c *domain.Capability) { c.Step("search").Risk = domain.RiskIrreversible },
			"steps[search].risk", "risk"},
		{"the capability's risk", func(c *domain.Capability) { c.Risk = domain.RiskElevated },
			"risk", "risk"},
		{"an effect", func(c *domain.Capability) {
			c.Step("search").Effects = []domain.EffectContract{{RecordWritten: &domain.RecordWritten{Via: "memberdesk.transfer_history@1.0.0"}}}
		}, "steps[search].effects", "effect"},
		{"an identity check", func(c *domain.Capability) {
			c.Checkpoint.When.AllOf[1].NodeExists.Name.Value = "Member {input.other}"
		}, "checkpoint.when.all_of", "identity check"},
		{"a target's role", func(c *domain.Capability) { c.Step("search").Target.Role = "link" },
			"steps[search].target.role", "not a locator field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			draft := clone(t, base)
			draft.Version = "1.2.1"
			tt.edit(draft)
			cs, err := Diff(base, draft)
			if err != nil {
				t.Fatal(err)
			}
			var got []Change
			for _, c := range cs {
				if c.Path != "version" {
					got = append(got, c)
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0].Path, tt.path) {
				t.Fatalf("changes %v, want one at %s", got, tt.path)
			}
			if tt.refused == "" && got[0].Refused != "" {
				t.Fatalf("%s refused (%s), want allowed", got[0].Path, got[0].Refused)
			}
			if tt.refused != "" && !strings.Contains(got[0].Refused, tt.refused) {
				t.Fatalf("%s: refusal %q, want one naming %q", got[0].Path, got[0].Refused, tt.refused)
			}
			if r := Refused(cs); (len(r) > 0) != (tt.refused != "") {
				t.Fatalf("Refused = %v", r)
			}
		})
	}
}

func clone(t *testing.T, c *domain.Capability) *domain.Capability {
	t.Helper()
	l, body, err := Draft(context.Background(), c, c.Version+"-x", "search", c.Step("search").Target.Name.Value)
	if err != nil || len(body) == 0 {
		t.Fatal(err)
	}
	out := l.Capability
	out.Version, out.ContentHash = c.Version, c.ContentHash
	return out
}

// TestDraftSealsOnlyTheName: Draft bumps the version, renames the one
// target, seals, and the result loads with its hash.
func TestDraftSealsOnlyTheName(t *testing.T) {
	base := loadLookup(t)
	next, err := NextPatch(base.Capability.Version)
	if err != nil || next != "1.2.1" {
		t.Fatalf("NextPatch(%s) = %s, %v", base.Capability.Version, next, err)
	}
	l, body, err := Draft(t.Context(), base.Capability, next, "search", "Look up")
	if err != nil {
		t.Fatal(err)
	}
	if l.Hash == base.Hash || l.Capability.Step("search").Target.Name.Value != "Look up" {
		t.Fatalf("draft %s: hash %s, name %q", l.Capability.Ref(), l.Hash, l.Capability.Step("search").Target.Name.Value)
	}
	cs, err := Diff(base.Capability, l.Capability)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range cs {
		paths = append(paths, c.Path)
	}
	if strings.Join(paths, ",") != "content_hash,steps[search].target.name.value,version" || len(Refused(cs)) != 0 {
		t.Fatalf("changes %v", cs)
	}
	f := filepath.Join(t.TempDir(), "draft.json")
	if err := os.WriteFile(f, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if back, err := capability.LoadContext(t.Context(), f); err != nil || back.Hash != l.Hash {
		t.Fatalf("the draft does not load back: %v", err)
	}
}
