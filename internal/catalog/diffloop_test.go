package catalog

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

func loadLoop(t *testing.T) *domain.Capability {
	t.Helper()
	l, err := capability.Load(filepath.Join("..", "capability", "testdata", "loop", "checklist.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l.Capability
}

// TestDiffLoops: cua catalog diff shows a loop added or removed, a change
// of the list it walks, and an inner step changed, added or made riskier
// under the loop's own path.
func TestDiffLoops(t *testing.T) {
	t.Parallel()
	a, b := loadLoop(t), loadLoop(t)
	if got, _ := Diff(a, b); len(got) != 0 {
		t.Fatalf("identical loops differ: %v", got)
	}
	fe := b.Step("tick_each").ForEach
	fe.Steps[0].Target.Name.Value = "{item} (done)"
	fe.Steps[1].Risk = domain.RiskElevated
	fe.Steps = append(fe.Steps, domain.Step{ID: "note", Action: domain.ActReload, Risk: domain.RiskSafe})
	b.Step("qty_each").ForEach.Input = "items"
	*b.Input("items").MaxItems = 50
	b.Steps = slices.DeleteFunc(b.Steps, func(s domain.Step) bool { return s.ID == "heading" })
	got, err := Diff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		`~ inputs[items].max_items: 5 -> 50`,
		`- steps[heading]: `,
		`~ steps[tick_each].for_each.steps[tick].target: {"name":{"match":"exact","value":"{item}"},"role":"checkbox"} -> {"name":{"match":"exact","value":"{item} (done)"},"role":"checkbox"}`,
		`~ steps[tick_each].for_each.steps[read].risk: "safe" -> "elevated" [risk up]`,
		`+ steps[tick_each].for_each.steps[note]: `,
		`~ steps[qty_each].for_each.input: "rows" -> "items"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q; got:\n%s", want, text)
		}
	}
	c := loadLoop(t)
	c.Steps = c.Steps[:1]
	got, _ = Diff(c, a)
	text = ""
	for _, ch := range got {
		text += ch.String() + "\n"
	}
	if !strings.Contains(text, "+ steps[tick_each]: ") || !strings.Contains(text, "[risk up]") {
		t.Errorf("an added loop with an elevated step is not shown as added, risk up:\n%s", text)
	}
}
