package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// capAtSizeCap writes a valid capability as close under the 4 MiB cap
// (capability.MaxFileSize) as equal key lines allow (4.0 MB for 200,000
// keys), whose one outcome returns keys keys, in
// reverse order (the worst case for a sort that is not n·log n), and
// returns its path.
func capAtSizeCap(tb testing.TB, keys int) string {
	tb.Helper()
	base, err := os.ReadFile(filepath.Join(examples, "corebank.auth.sign_on.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	s := string(base)
	s = s[:strings.Index(s, "content_hash:")]
	i := strings.Index(s, "recovery:")
	head := s[:i] + "  - code: big\n    when:\n      text_present: {text: x}\n    returns:\n"
	const keyLine = len("      k0000000: \n")
	valueLen := (capability.MaxFileSize-len(head)-len(s[i:]))/keys - keyLine
	if valueLen < 1 {
		tb.Fatalf("%d keys do not fit in %d bytes", keys, capability.MaxFileSize)
	}
	value := strings.Repeat("v", valueLen)
	var b strings.Builder
	b.Grow(capability.MaxFileSize)
	b.WriteString(head)
	for k := keys; k > 0; k-- {
		fmt.Fprintf(&b, "      k%07d: %s\n", k, value)
	}
	b.WriteString(s[i:])
	if b.Len() > capability.MaxFileSize {
		tb.Fatalf("generated %d bytes, over the %d cap", b.Len(), capability.MaxFileSize)
	}
	path := filepath.Join(tb.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkValidateAtCap is `cua capability validate` on a file at the
// 4 MiB cap with 200,000 keys in one object, minus process start and
// printing: read (bounded), parse, schema and semantic validation,
// defaults and the content hash. The goal (issue 9) is under 2 s here.
// Set CUA_BENCH_KEEP=PATH to copy the generated file to PATH (to time the
// real binary on it).
func BenchmarkValidateAtCap(b *testing.B) {
	path := capAtSizeCap(b, 200000)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if keep := os.Getenv("CUA_BENCH_KEEP"); keep != "" {
		if err := os.WriteFile(keep, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := capability.LoadContext(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if l.Sealed || !strings.HasPrefix(l.Hash, capability.HashPrefix) {
			b.Fatalf("loaded %s sealed=%v hash %q", l.File, l.Sealed, l.Hash)
		}
	}
}
