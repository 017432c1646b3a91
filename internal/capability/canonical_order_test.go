package capability

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
)

// TestCompareUTF16 holds compareUTF16 to the definition it replaces:
// slices.Compare of the strings' UTF-16 code units.
func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	words := []string{"", "a", "A", "aa", "ab", "b", "\u0080", "\u00f6", "\u20ac", "\ud7ff", "\ue000",
		"\ufb33", "\uffff", "\U00010000", "\U0001f600", "\U0001f601", "\U0010ffff", "a\U0001f600", "a\uffff", "a\u00f6b", "a\u00f6"}
	for _, a := range words {
		for _, b := range words {
			want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
			if got := compareUTF16(a, b); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestCanonicalJSONOrderAndDuplicates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, err string
	}{
		{name: "sorted input is kept", in: `{"a":1,"b":{"c":2,"d":[3]}}`, want: `{"a":1,"b":{"c":2,"d":[3]}}`},
		{name: "unsorted input is sorted", in: `{"d":[3],"b":{"d":2,"c":1},"a":0}`, want: `{"a":0,"b":{"c":1,"d":2},"d":[3]}`},
		{name: "supplementary before U+E000", in: `{"\ue000":1,"\ud83d\ude00":2}`, want: "{\"\U0001f600\":2,\"\ue000\":1}"},
		{name: "adjacent duplicate", in: `{"a":1,"a":2}`, err: `duplicate member name "a"`},
		{name: "distant duplicate in unsorted input", in: `{"b":1,"a":2,"b":3}`, err: `duplicate member name "b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := CanonicalJSON(context.Background(), []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestParseContextCancelledMidway cancels validation of a file at the size
// cap while it runs: ParseContext must return context.Canceled within a
// second of the cancel (SIGTERM's budget), whatever phase it is in.
func TestParseContextCancelledMidway(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("large input")
	}
	data := bigCapability(t, 200000)
	for _, after := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled atomic.Int64
		stop := time.AfterFunc(after, func() { cancelled.Store(time.Now().UnixNano()); cancel() })
		_, err := ParseContext(ctx, "big.yaml", data)
		returned := time.Now()
		stop.Stop()
		cancel()
		if at := cancelled.Load(); at == 0 {
			continue // finished before the cancel: nothing to measure
		} else if late := returned.Sub(time.Unix(0, at)); late > time.Second {
			t.Errorf("cancel after %v: returned %v after the cancel, want under 1s", after, late)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancel after %v: err = %v, want context.Canceled", after, err)
		}
	}
}
