package targeting

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// BenchmarkResolve resolves descriptors on normalised perception.Synthetic
// snapshots of 1k, 10k and 100k raw nodes. The targets sit at the end of
// the document (the worst case for a scan); "not_found" climbs the whole
// ladder.
func BenchmarkResolve(b *testing.B) {
	for _, size := range []int{1_000, 10_000, 100_000} {
		s := perception.Normalize(perception.Synthetic(size, 1))
		lastAccount := ""
		for _, nd := range s.Nodes {
			if nd.Role == "cell" && strings.HasPrefix(nd.Name, "Account ") && nd.Frame == "" {
				lastAccount = nd.Name
			}
		}
		descs := []struct {
			name string
			d    domain.TargetDescriptor
		}{
			{"exact", domain.TargetDescriptor{Role: "button", Name: exact("Submit final")}},
			{"normalized", domain.TargetDescriptor{Role: "button", Name: exact("submit FINAL!")}},
			{"contains", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "final", Match: domain.MatchContains}}},
			{"regex", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "^Submit", Match: domain.MatchRegex}}},
			{"region_ordinal", domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Scope: &domain.Scope{Region: "Final"}, Ordinal: ptr(2)}},
			{"row_of", domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelRowOf, lastAccount)}},
			{"labelled_by", domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "Member ID"), Scope: &domain.Scope{Region: "Search " + strings.Fields(lastAccount)[1][:strings.Index(strings.Fields(lastAccount)[1], ".")]}}},
			{"hint", domain.TargetDescriptor{Role: "textbox", Hints: &domain.Hints{CSS: "#member-id-3"}}},
			{"not_found", domain.TargetDescriptor{Role: "button", Name: exact("Transfer funds"), Anchor: anchor(domain.RelAdjacentTo, "Member ID"), Hints: &domain.Hints{CSS: "#transfer"}}},
		}
		for _, dd := range descs {
			b.Run(strconv.Itoa(size)+"/"+dd.name, func(b *testing.B) {
				_, err := Resolve(s, dd.d)
				if (err != nil) != (dd.name == "not_found") {
					b.Fatalf("%s: %v", Describe(dd.d), err)
				}
				b.ReportAllocs()
				for b.Loop() {
					Resolve(s, dd.d)
				}
			})
		}
	}
}

func BenchmarkEval(b *testing.B) {
	s := perception.Normalize(perception.Synthetic(10_000, 1))
	p := domain.Predicate{AllOf: []domain.Predicate{
		{TextPresent: &domain.TextQuery{Text: "Contact support"}},
		{NodeExists: &domain.TargetDescriptor{Role: "button", Name: exact("Submit final")}},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := Eval(s, &p); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkSynthesize(b *testing.B) {
	s := perception.Normalize(perception.Synthetic(10_000, 1))
	i := find(b, s, "button", "Edit", 10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Synthesize(s, i); err != nil {
			b.Fatal(err)
		}
	}
}
