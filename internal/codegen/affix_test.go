package codegen_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/domain"
)

// TestStartsWithEndsWithRendered: a starts_with/ends_with name becomes a
// RegExp with a lookahead for the start, so the start and the end may
// overlap in the generated spec as in targeting ("Search" starts with
// "Sear" and ends with "arch"); inputs are escaped when the spec runs. A
// normalized pair has no locator and is refused naming the step.
func TestStartsWithEndsWithRendered(t *testing.T) {
	t.Parallel()
	l := edit(t, func(c *domain.Capability) {
		c.Steps[2].Target.Name = &domain.NameMatch{StartsWith: "Sear", EndsWith: "arch", Match: domain.MatchExact}
		c.Checkpoint.When.AllOf[1].NodeExists.Name = &domain.NameMatch{StartsWith: "Member {input.member_id}", Match: domain.MatchExact}
	})
	spec, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`getByRole("button", { name: new RegExp("^(?=" + reEscape("Sear") + ")[\\s\\S]*" + reEscape("arch") + "\u0024") })`,
		`name: new RegExp("^(?=" + reEscape("Member " + input(c, "member_id")) + ")[\\s\\S]*" + "\u0024") }`,
	} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("spec lacks %s:\n%s", want, spec)
		}
	}
	l = edit(t, func(c *domain.Capability) {
		c.Steps[2].Target.Name = &domain.NameMatch{StartsWith: "Sear", Match: domain.MatchNormalized}
	})
	if _, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)}); err == nil || !strings.Contains(err.Error(), "normalized starts_with/ends_with has no locator") {
		t.Errorf("a normalized pair rendered: %v", err)
	}
}
