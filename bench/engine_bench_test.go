package bench

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/targeting"
)

// Engine micro-benchmarks. Each is valid with -benchtime=1x (CI runs them
// once); bench/replay.sh runs them longer and reports ms/op.

// snapshotSizes are the synthetic snapshot sizes, by label.
var snapshotSizes = []struct {
	label string
	n     int
}{{"1k", 1000}, {"10k", 10000}, {"100k", 100000}}

// BenchmarkResolve resolves two descriptors in normalised synthetic
// snapshots: a semantic one (the only "Submit final" button, at the end of
// the top document) and an anchored one (the "Edit" button in the row of
// the last "Account S.R" label of the top document: hundreds of "Edit"
// buttons narrowed by row_of).
func BenchmarkResolve(b *testing.B) {
	for _, size := range snapshotSizes {
		snap := perception.Normalize(perception.Synthetic(size.n, 1))
		label := ""
		for i := len(snap.Nodes) - 1; i >= 0; i-- {
			n := snap.Nodes[i]
			if n.Frame == "" && n.Role == "cell" && strings.HasPrefix(n.Name, "Account ") {
				label = n.Name
				break
			}
		}
		if label == "" {
			b.Fatal("no account label in the synthetic snapshot")
		}
		targets := []struct {
			name string
			d    domain.TargetDescriptor
		}{
			{"semantic", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Submit final"}}},
			{"anchored", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Edit"},
				Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: label}}},
		}
		for _, t := range targets {
			b.Run(t.name+"/nodes="+size.label, func(b *testing.B) {
				if _, err := targeting.Resolve(snap, t.d); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := targeting.Resolve(snap, t.d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkNormalize normalises raw synthetic snapshots shaped like
// Chromium's accessibility tree of a back-office page.
func BenchmarkNormalize(b *testing.B) {
	for _, size := range snapshotSizes {
		raw := perception.Synthetic(size.n, 1)
		b.Run("nodes="+size.label, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if perception.Normalize(raw) == nil {
					b.Fatal("nil snapshot")
				}
			}
		})
	}
}

// redactInput is about 1 MB of log-like text: mostly harmless lines, with
// an email, a card number, a bearer token, an account number and a
// registered secret every few lines.
func redactInput() string {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "2026-11-30T12:00:%02d.%03dZ INFO step dispatched run_id=r%06d step=enter_member strategy=semantic_exact duration_ms=%d\n", i%60, i%1000, i, i%97)
		switch i % 8 {
		case 1:
			fmt.Fprintf(&sb, "member contact jane.doe%d@example.com updated by OP1001\n", i)
		case 3:
			sb.WriteString("card on file 4111 1111 1111 1111 expires 12/29\n")
		case 5:
			fmt.Fprintf(&sb, "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl%d\n", i)
		case 6:
			sb.WriteString("operator typed teller-pass-1 into the password field; account 000123456789 selected\n")
		}
	}
	return sb.String()
}

// BenchmarkRedact redacts 1 MB of text with every pattern on and one
// registered literal.
func BenchmarkRedact(b *testing.B) {
	in := redactInput()
	r := redact.New()
	r.RegisterLiteral("teller-pass-1")
	if out := r.String(in); strings.Contains(out, "teller-pass-1") || strings.Contains(out, "4111 1111 1111 1111") {
		b.Fatal("the redactor missed a secret")
	}
	b.Run("1MB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			_ = r.String(in)
		}
	})
}

// BenchmarkContentHash computes the content hash (RFC 8785 canonical JSON,
// SHA-256) of the reference capability.
func BenchmarkContentHash(b *testing.B) {
	l, err := capability.Load(filepath.Join(examples, "memberdesk.savings_balance.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	h, err := capability.Hash(l.Capability)
	if err != nil || h != l.Hash {
		b.Fatalf("hash %s (%v), want the sealed %s", h, err, l.Hash)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := capability.Hash(l.Capability); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventAppend appends a typical action_dispatched event to a
// run's hash-chained event log (redacted, chained, buffered; Close syncs).
func BenchmarkEventAppend(b *testing.B) {
	bundle, err := evidence.Open(b.TempDir(), "bench-append", redact.New())
	if err != nil {
		b.Fatal(err)
	}
	defer bundle.Close()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		err := bundle.Append(evidence.Event{
			At: "2026-11-30T12:00:00." + strconv.Itoa(100000+i%900000) + "Z", Type: "action_dispatched", Actor: domain.ActorAutomation,
			StepID: "enter_member",
			Data: map[string]any{"action": "type", "risk": "safe", "duration_ms": 3, "epoch": 1, "role": "textbox",
				"name": "Member number", "frame": "content", "strategy": "semantic_exact", "value": "{$input: member_id}"},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
