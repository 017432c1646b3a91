package capability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

// jcsOf is the old canonicaliser (github.com/gowebpki/jcs), kept as the
// reference the new one must match byte for byte.
func jcsOf(t testing.TB, raw []byte) []byte {
	t.Helper()
	out, err := jcs.Transform(raw)
	if err != nil {
		t.Fatalf("jcs: %v", err)
	}
	return out
}

func TestCanonicalJSONMatchesJCS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
	}{
		{"empty object", `{}`},
		{"empty array", `[]`},
		{"scalars", `[null,true,false,"",0,-0,1,-1]`},
		{"key order by utf16", `{"b":1,"a":2,"\u20ac":3,"\ud83d\ude00":4,"\uffff":5,"aa":6,"A":7,"":8}`},
		{"rfc 8785 sort example", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`},
		{"escapes", `["\"\\\/\b\f\n\r\t","\u0000\u0001\u001f\u007f","<>&\u2028\u2029","\u00e9\u4e2d\ud83d\ude00"]`},
		{"numbers", `[1e21,1e-7,1e-6,123456789012345678901,0.1,1.5e300,-2.5e-300,5e-324,1.7976931348623157e308,100,1E2,0.000001,12.5e0,9007199254740993]`},
		{"nested", "{ \"z\" : [ {\"y\":1, \"x\":{\"b\":[],\"a\":{}}} ] ,\n\t\"a\": \"v\" }"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := CanonicalJSON(context.Background(), []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := jcsOf(t, []byte(tc.in)); string(got) != string(want) {
				t.Errorf("canonical\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestCanonicalMatchesJCSOnFiles proves the content hash did not move: the
// canonical form of every example and testdata capability is the one the
// old library wrote.
func TestCanonicalMatchesJCSOnFiles(t *testing.T) {
	t.Parallel()
	files := exampleFiles(t)
	more, _ := filepath.Glob("testdata/*.yaml")
	files = append(files, more...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			l, err := parseUnverified(f, data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Canonical(l.Capability)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(l.Capability)
			if err != nil {
				t.Fatal(err)
			}
			// Canonical clears content_hash; so must the reference.
			var tree map[string]any
			if err := json.Unmarshal(raw, &tree); err != nil {
				t.Fatal(err)
			}
			delete(tree, "content_hash")
			raw, _ = json.Marshal(tree)
			if want := jcsOf(t, raw); string(got) != string(want) {
				t.Errorf("canonical form changed\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestCanonicalNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1.5, "-1.5"},
		{1e21, "1e+21"}, {1e20, "100000000000000000000"}, {1e-6, "0.000001"}, {1e-7, "1e-7"},
		{123e-20, "1.23e-18"}, {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{0.30000000000000004, "0.30000000000000004"},
	} {
		got, err := CanonicalNumber(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CanonicalNumber(%v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := CanonicalNumber(bad); err == nil {
			t.Errorf("CanonicalNumber(%v): want an error", bad)
		}
	}
}

func TestCanonicalJSONRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `{"a":1,"a":2}`, `[1,]`, `01`, `"\ud800"`, `{"a":1} x`, `nul`, "\"a\x01\""} {
		if out, err := CanonicalJSON(context.Background(), []byte(in)); err == nil {
			t.Errorf("CanonicalJSON(%q) = %s, want an error", in, out)
		}
	}
}

func TestCanonicalJSONHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := CanonicalJSON(ctx, bigJSON(10000))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func bigJSON(n int) []byte {
	var b strings.Builder
	b.WriteString("{")
	for i := n; i > 0; i-- {
		if i != n {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%07d":"v"`, i)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// bigCapability is a valid capability file near the 4 MiB cap whose one
// outcome returns 200,000 keys (in reverse order, the worst case for the
// old insertion-style sort).
func bigCapability(t testing.TB, keys int) []byte {
	t.Helper()
	base, err := os.ReadFile(filepath.Join(examples, "corebank.auth.sign_on.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(base)
	s = s[:strings.Index(s, "content_hash:")]
	i := strings.Index(s, "recovery:")
	var b strings.Builder
	b.WriteString(s[:i])
	b.WriteString("  - code: big\n    when:\n      text_present: {text: x}\n    returns:\n")
	for k := keys; k > 0; k-- {
		fmt.Fprintf(&b, "      k%07d: v\n", k)
	}
	b.WriteString(s[i:])
	return []byte(b.String())
}

// TestValidationScalesNLogN validates 5,000 and 50,000 keys in one object:
// ten times the keys may cost about twelve times the time (n·log n), while
// a quadratic step (the old key sort, the old problem sort) costs a
// hundred times. Timing ratios hold under the race detector and on a
// loaded machine where an absolute bound would not; the absolute number at
// 200,000 keys is BenchmarkParseAtCap.
func TestValidationScalesNLogN(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	timeParse := func(keys int) time.Duration {
		data := bigCapability(t, keys)
		best := time.Duration(1<<63 - 1)
		for range 2 {
			start := time.Now()
			if _, err := Parse("big.yaml", data); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := timeParse(5000), timeParse(50000)
	if ratio := float64(large) / float64(small); ratio > 40 {
		t.Errorf("10x the keys took %.0fx the time (%v vs %v): a quadratic step is back", ratio, large, small)
	}
}

func TestParseContextCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ParseContext(ctx, "big.yaml", bigCapability(t, 1000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSortProblemsStableByLine(t *testing.T) {
	t.Parallel()
	ps := []Problem{{Line: 3, Message: "a"}, {Line: 1, Message: "b"}, {Line: 3, Message: "c"}, {Line: 2, Message: "d"}, {Line: 1, Message: "e"}}
	got := sortProblems(ps)
	var msgs []string
	for _, p := range got {
		msgs = append(msgs, p.Message)
	}
	if strings.Join(msgs, "") != "bedac" {
		t.Errorf("order = %v, want b e d a c", msgs)
	}
}

// BenchmarkParseAtCap validates a capability at the 4 MiB cap with 200,000
// keys in one object.
func BenchmarkParseAtCap(b *testing.B) {
	data := bigCapability(b, 200000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse("big.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalJSON canonicalises a 200,000-key object.
func BenchmarkCanonicalJSON(b *testing.B) {
	data := bigJSON(200000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := CanonicalJSON(context.Background(), data); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHashDefaultedMatchesHash(t *testing.T) {
	t.Parallel()
	files := exampleFiles(t)
	more, _ := filepath.Glob("testdata/*.yaml")
	for _, f := range append(files, more...) {
		l, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Hash(l.Capability)
		if err != nil {
			t.Fatal(err)
		}
		if l.Hash != want {
			t.Errorf("%s: Parse's hash %s, Hash %s", f, l.Hash, want)
		}
	}
	big, err := Parse("big.yaml", bigCapability(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := Hash(big.Capability); big.Hash != want {
		t.Errorf("big: Parse's hash %s, Hash %s", big.Hash, want)
	}
}
