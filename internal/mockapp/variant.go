package mockapp

import (
	"fmt"
	"hash/fnv"
)

// The variants a server can render. Accessible names are identical in a and
// b; c renames three of them.
const (
	VariantA = "a" // the baseline that capabilities are discovered against
	VariantB = "b" // same names, churned ids/classes, nesting and row order
	VariantC = "c" // b plus renamed labels: a capability must no longer match
)

func validVariant(v string) bool {
	return v == VariantA || v == VariantB || v == VariantC
}

// variant is what templates use to render the parts that change between
// variants: id and class values, wrapper structure and renamed labels.
type variant struct {
	Name string
}

// Alt reports whether the churned structure of variants b and c is used.
func (v variant) Alt() bool { return v.Name != VariantA }

// ID returns the id attribute value for the logical element name. Variant a
// uses the name itself; b and c use a hash that shares nothing with it, so
// a selector recorded against a finds nothing in b.
func (v variant) ID(name string) string {
	if !v.Alt() {
		return name
	}
	return churn("id", name)
}

// Class is ID for class attribute values; a's classes carry an "md-" prefix.
func (v variant) Class(name string) string {
	if !v.Alt() {
		return "md-" + name
	}
	return churn("class", name)
}

// churn derives a stable, meaningless token for variants b and c (c keeps
// b's markup, so both share one salt).
func churn(kind, name string) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "memberdesk/b/%s/%s", kind, name)
	return fmt.Sprintf("q%08x", h.Sum32())
}

// SavingsLabel is the member-page row label of the savings balance.
func (v variant) SavingsLabel() string {
	if v.Name == VariantC {
		return "Savings Bal."
	}
	return "Savings Balance"
}

// SearchButton is the name of the member search submit button.
func (v variant) SearchButton() string {
	if v.Name == VariantC {
		return "Find member"
	}
	return "Search"
}

// SubmitButton is the name of the button that posts a reviewed transfer.
func (v variant) SubmitButton() string {
	if v.Name == VariantC {
		return "Post transfer"
	}
	return "Submit transfer"
}
