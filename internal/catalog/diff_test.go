package catalog

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

var update = flag.Bool("update", false, "rewrite golden files")

func loadExample(t *testing.T, name string) *domain.Capability {
	t.Helper()
	l, err := capability.Load(filepath.Join("..", "..", "examples", "capabilities", name))
	if err != nil {
		t.Fatal(err)
	}
	return l.Capability
}

func TestDiffIdentical(t *testing.T) {
	t.Parallel()
	a, b := loadExample(t, "memberdesk.transfer_funds.yaml"), loadExample(t, "memberdesk.transfer_funds.yaml")
	got, err := Diff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("identical capabilities differ: %v", got)
	}
	b.ContentHash = "sha256:other"
	b.Provenance = &domain.Provenance{}
	if got, _ := Diff(a, b); len(got) != 0 {
		t.Errorf("the seal and the provenance are not behaviour, got %v", got)
	}
}

// TestDiffTransferEdits makes the edits a reviewer must see and checks the
// whole report against testdata/transfer_edits.golden.
func TestDiffTransferEdits(t *testing.T) {
	t.Parallel()
	a, b := loadExample(t, "memberdesk.transfer_funds.yaml"), loadExample(t, "memberdesk.transfer_funds.yaml")
	b.Version = "1.4.0"
	b.Entrypoint.URLPattern = "{base_url}/transfer"
	b.Steps[5].Target.Name.Value = "Review"         // review: a target renamed
	b.Steps[6].Gate = false                         // submit: the gate removed
	b.Steps[4].Risk = domain.RiskIrreversible       // enter_amount: risk raised
	b.Steps[2], b.Steps[3] = b.Steps[3], b.Steps[2] // choose_to before choose_from
	b.Inputs = b.Inputs[:3]                         // amount input removed
	max := 500.0
	b.Inputs[0].Maximum = &max // member_id gains a maximum
	b.Steps = append(b.Steps, domain.Step{ID: "notify", Action: domain.ActClick, Risk: domain.RiskElevated,
		Target: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Notify member"}}})
	b.Outcomes = nil
	b.Policy.AllowedDomains = []string{"127.0.0.1"}
	got, err := Diff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	text := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "transfer_edits.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if text != string(want) {
		t.Errorf("diff report:\n%s\nwant (%s):\n%s", text, golden, want)
	}
	risky := map[string]bool{}
	for _, c := range got {
		if c.RiskUp {
			risky[c.Path] = true
		}
	}
	for _, p := range []string{"steps[enter_amount].risk", "steps[notify]", "steps[submit].gate"} {
		if !risky[p] {
			t.Errorf("%s is not marked risk up; risk-up changes: %v", p, risky)
		}
	}
	if len(risky) != 3 {
		t.Errorf("risk-up changes = %v, want exactly the three above", risky)
	}
}

func TestDiffNil(t *testing.T) {
	t.Parallel()
	if _, err := Diff(nil, loadExample(t, "memberdesk.transfer_funds.yaml")); err == nil {
		t.Error("Diff(nil, c) succeeded")
	}
}
