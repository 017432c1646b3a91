package perception

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

type panicStringer struct{}

func (panicStringer) String() string { panic("boom") }

type panicMarshaler struct{}

func (panicMarshaler) MarshalJSON() ([]byte, error) { panic("boom") }

// orderedJSON marshals to an object whose key order is its field.
type orderedJSON string

func (o orderedJSON) MarshalJSON() ([]byte, error) { return []byte(o), nil }

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

type color int

func (c color) String() string { return [...]string{"red", "green"}[c] }

type node struct {
	Name string
	Next *node
}

type tagged struct {
	B      int
	A      string `json:"z"`
	Skip   string `json:"-"`
	Dash   string `json:"-,"`
	hidden int
	Ptr    *int
	When   time.Time
}

func nested(depth int) any {
	var v any = "leaf"
	for range depth {
		v = map[string]any{"n": v}
	}
	return v
}

func manyKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m["k"+pad3(i)] = i
	}
	return m
}

func pad3(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", 3-len(s)) + s
}

func TestStableProgressKey(t *testing.T) {
	t.Parallel()
	cyclic := map[string]any{"name": "root"}
	cyclic["self"] = cyclic
	cycSlice := []any{1, nil}
	cycSlice[1] = cycSlice
	ring := &node{Name: "a"}
	ring.Next = &node{Name: "b", Next: ring}
	shared := map[string]any{"k": 1}
	seven := 7
	when := time.Date(2026, 6, 15, 10, 0, 0, 123456789, time.UTC)
	long := strings.Repeat("é", 200) // 400 bytes
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"scalars", []any{true, false, 1, int8(-2), uint(3), 1.5, float32(0.25), "s"}, `[true,false,1,-2,3,1.5,0.25,"s"]`},
		{"float and int agree", []any{float64(1), 1, json.Number("1")}, `[1,1,1]`},
		{"non-finite", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, `["NaN","+Inf","-Inf"]`},
		{"bad json.Number", json.Number("1x"), `"1x"`},
		{"complex", complex(1, 2), `"(1+2i)"`},
		{"sorted keys", map[string]any{"b": 2, "a": 1, "c": map[string]any{"z": 0, "y": []any{}}}, `{"a":1,"b":2,"c":{"y":[],"z":0}}`},
		{"escapes", "a\"b\\c\nd\x01\xff", `"a\"b\\c\nd\u0001` + "\ufffd" + `"`},
		{"string cap", strings.Repeat("x", 300), `"` + strings.Repeat("x", 256) + `…[300 bytes]"`},
		{"string cap on a rune boundary", long, `"` + strings.Repeat("é", 128) + `…[400 bytes]"`},
		{"key cap", map[string]int{strings.Repeat("k", 257): 1}, `{"` + strings.Repeat("k", 256) + `…[257 bytes]":1}`},
		{"bytes", []byte("hi"), `"aGk="`},
		{"byte array", [2]byte{'h', 'i'}, `"aGk="`},
		{"depth cap", nested(9), strings.Repeat(`{"n":`, 8) + `"[MaxDepth]"` + strings.Repeat("}", 8)},
		{"depth under cap", nested(8), strings.Repeat(`{"n":`, 8) + `"leaf"` + strings.Repeat("}", 8)},
		{"array cap", make([]int, 66), `[` + strings.Repeat("0,", 64) + `"[+2 items]"]`},
		{"cyclic map", cyclic, `{"name":"root","self":"[Circular]"}`},
		{"cyclic slice", cycSlice, `[1,"[Circular]"]`},
		{"pointer cycle", ring, `{"Name":"a","Next":{"Name":"b","Next":"[Circular]"}}`},
		{"shared child is not a cycle", map[string]any{"a": shared, "b": shared, "c": []any{shared, shared}}, `{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":1}]}`},
		{"time", when, `"2026-06-15T10:00:00.123456789Z"`},
		{"time pointer", &when, `"2026-06-15T10:00:00.123456789Z"`},
		{"int keys in byte order", map[int]string{2: "b", 10: "a"}, `{"10":"a","2":"b"}`},
		{"interface keys stay apart", map[any]any{1: "x", "1": "y"}, `{"\"1\"":"y","1":"x"}`},
		{"string set", map[string]struct{}{"b": {}, "a": {}}, `["a","b"]`},
		{"bool set", map[int]bool{3: true, 1: true, 2: false}, `[1,3]`},
		{"struct", tagged{B: 1, A: "x", Skip: "no", Dash: "d", hidden: 9, Ptr: &seven, When: when}, `{"-":"d","B":1,"Ptr":7,"When":"2026-06-15T10:00:00.123456789Z","z":"x"}`},
		{"nil pointer", (*node)(nil), `null`},
		{"nil map and slice", []any{map[string]any(nil), []int(nil)}, `[null,null]`},
		{"func and chan", []any{func() {}, make(chan int)}, `["[func]","[chan]"]`},
		{"stringer", []color{1, 0}, `["green","red"]`},
		{"error", errors.New("nope"), `"nope"`},
		{"panicking Stringer", []any{panicStringer{}, 1}, `["[panic]",1]`},
		{"panicking MarshalJSON", map[string]any{"m": panicMarshaler{}, "n": 2}, `{"m":"[panic]","n":2}`},
		{"failing MarshalJSON", failingMarshaler{}, `"[error]"`},
		{"MarshalJSON key order", orderedJSON(`{"b":1,"a":[2,{"d":0,"c":1}]}`), `{"a":[2,{"c":1,"d":0}],"b":1}`},
		{"raw message", json.RawMessage(`{"y":1,"x":2}`), `{"x":2,"y":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := StableProgressKey(tt.in); got != tt.want {
				t.Errorf("StableProgressKey() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestStableProgressKeyKeyCap(t *testing.T) {
	t.Parallel()
	got := StableProgressKey(manyKeys(100))
	var want strings.Builder
	want.WriteString("{")
	for i := range ProgressMaxKeys {
		want.WriteString(`"k` + pad3(i) + `":` + strconv.Itoa(i) + ",")
	}
	want.WriteString(`"[+36 keys]":null}`)
	if got != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got, want.String())
	}
	set := map[int]struct{}{}
	for i := range 70 {
		set[i] = struct{}{}
	}
	got = StableProgressKey(set)
	if !strings.HasSuffix(got, `,"[+6 members]"]`) || strings.Count(got, ",") != 64 {
		t.Errorf("set of 70: %s", got)
	}
}

func TestStableProgressKeyOrderIndependent(t *testing.T) {
	t.Parallel()
	// Insertion order of Go maps is not observable, but decoding JSON in
	// two key orders is the case that matters: shuffled keys are not
	// progress.
	var a, b any
	if err := json.Unmarshal([]byte(`{"screen":"member","fields":{"b":1,"a":2},"list":[{"y":1,"x":2}]}`), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"list":[{"x":2,"y":1}],"fields":{"a":2,"b":1},"screen":"member"}`), &b); err != nil {
		t.Fatal(err)
	}
	if ka, kb := StableProgressKey(a), StableProgressKey(b); ka != kb {
		t.Errorf("key order changed the key:\n%s\n%s", ka, kb)
	}
	c := map[string]any{"screen": "search"}
	if StableProgressKey(a) == StableProgressKey(c) {
		t.Error("a changed screen did not change the key")
	}
}

func TestStableProgressKeyDeterministicTies(t *testing.T) {
	t.Parallel()
	// NaN keys are distinct keys that encode alike; their values break the
	// tie.
	m := map[float64]string{math.NaN(): "b", math.NaN(): "a", math.NaN(): "c", 1: "x"}
	want := `{"\"NaN\"":"a","\"NaN\"":"b","\"NaN\"":"c","1":"x"}`
	for range 50 {
		if got := StableProgressKey(m); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

func TestStableProgressKeyPointerChain(t *testing.T) {
	t.Parallel()
	// A million distinct pointers in a row: bounded recursion, no stack
	// overflow.
	var head *node
	for i := range 1_000_000 {
		head = &node{Name: strconv.Itoa(i), Next: head}
	}
	got := StableProgressKey(head)
	if !strings.Contains(got, markDepth) || len(got) > ProgressMaxOutput {
		t.Errorf("pointer chain key (%d bytes) has no depth marker", len(got))
	}
	type link struct{ P *link }
	var p *link
	for range 10_000 {
		p = &link{P: p}
	}
	if got := StableProgressKey(p); !strings.Contains(got, markDepth) {
		t.Errorf("struct pointer chain: %s", got)
	}
	var pp any = 1
	for range 100_000 {
		v := pp
		pp = &v
	}
	if got := StableProgressKey(pp); got != `"[MaxDepth]"` {
		t.Errorf("pointer-to-interface chain: %s", got)
	}
}

func TestStableProgressKeyOutputCap(t *testing.T) {
	t.Parallel()
	big := make([]any, 64)
	for i := range big {
		big[i] = manyKeys(64)
	}
	got := StableProgressKey(map[string]any{"a": big, "b": big})
	if len(got) > ProgressMaxOutput {
		t.Fatalf("key is %d bytes, cap %d", len(got), ProgressMaxOutput)
	}
	if !strings.HasSuffix(got, markTruncated) {
		t.Errorf("a truncated key does not end in %q: …%s", markTruncated, got[len(got)-40:])
	}
	if !utf8.ValidString(got) {
		t.Error("truncated key is not valid UTF-8")
	}
	if got2 := StableProgressKey(map[string]any{"b": big, "a": big}); got2 != got {
		t.Error("truncated key is not deterministic")
	}
}

// sharedDAG returns levels maps, each holding 64 references to the one map
// of the level below.
func sharedDAG(levels int) map[string]any {
	cur := map[string]any{"leaf": true}
	for range levels {
		m := make(map[string]any, 64)
		for i := range 64 {
			m["k"+strconv.Itoa(i)] = cur
		}
		cur = m
	}
	return cur
}

func TestStableProgressKeySharedDAG(t *testing.T) {
	t.Parallel()
	// Not timed (BenchmarkStableProgressKeySharedDAG measures it): the key of
	// a DAG equals the key of the same tree built without sharing, within
	// the output cap.
	shared := map[string]any{"k": []any{1, 2}}
	dag := map[string]any{"a": shared, "b": map[string]any{"c": shared, "d": shared}}
	tree := map[string]any{"a": map[string]any{"k": []any{1, 2}}, "b": map[string]any{
		"c": map[string]any{"k": []any{1, 2}}, "d": map[string]any{"k": []any{1, 2}},
	}}
	if StableProgressKey(dag) != StableProgressKey(tree) {
		t.Errorf("DAG %s != tree %s", StableProgressKey(dag), StableProgressKey(tree))
	}
	// A node shared by a cycle: the back-reference is to an ancestor outside
	// the shared node, so each occurrence is encoded anew and stays right.
	root := map[string]any{}
	child := map[string]any{"up": root}
	root["x"], root["y"] = child, child
	if got, want := StableProgressKey(root), `{"x":{"up":"[Circular]"},"y":{"up":"[Circular]"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := StableProgressKey(sharedDAG(6)); len(got) > ProgressMaxOutput {
		t.Errorf("shared DAG key is %d bytes", len(got))
	}
}

// BenchmarkStableProgressKeySharedDAG encodes six levels of maps, each
// level's 64 keys all pointing at the one map below (64^6 paths).
func BenchmarkStableProgressKeySharedDAG(b *testing.B) {
	dag := sharedDAG(6)
	var key string
	b.ReportAllocs()
	for b.Loop() {
		key = StableProgressKey(dag)
	}
	b.ReportMetric(float64(len(key)), "key-bytes")
}

// BenchmarkStableProgressKeyWideShared is a DAG whose shared node is a map of
// 100,000 keys: its key selection is computed once.
func BenchmarkStableProgressKeyWideShared(b *testing.B) {
	wide := manyKeysN(100_000)
	levels := make(map[string]any, 64)
	for i := range 64 {
		levels["k"+strconv.Itoa(i)] = map[string]any{"w": wide, "n": i}
	}
	b.ReportAllocs()
	for b.Loop() {
		StableProgressKey(levels)
	}
}

func manyKeysN(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m["key-"+strconv.Itoa(i)] = i
	}
	return m
}

// blob returns a JSON-decoded app state of about size bytes: a list of
// records, a wide map and one long string.
func blob(tb testing.TB, size int) (any, int) {
	tb.Helper()
	var sb strings.Builder
	sb.WriteString(`{"screen":"member","records":[`)
	i := 0
	for sb.Len() < size/2 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":` + strconv.Itoa(i) + `,"name":"Member ` + strconv.Itoa(i) + `","balance":` + strconv.Itoa(i*37) + `.25,"tags":["a","b","c"],"active":true}`)
		i++
	}
	sb.WriteString(`],"index":{`)
	for j := 0; sb.Len() < size*9/10; j++ {
		if j > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"m` + strconv.Itoa(j) + `":` + strconv.Itoa(j))
	}
	sb.WriteString(`},"log":"` + strings.Repeat("x", size/10) + `"}`)
	var v any
	if err := json.Unmarshal([]byte(sb.String()), &v); err != nil {
		tb.Fatal(err)
	}
	return v, sb.Len()
}

func BenchmarkStableProgressKeyBlob(b *testing.B) {
	v, n := blob(b, 1<<20)
	var key string
	b.ReportAllocs()
	for b.Loop() {
		key = StableProgressKey(v)
	}
	b.ReportMetric(float64(n), "input-bytes")
	b.ReportMetric(float64(len(key)), "key-bytes")
}

// fuzzValue builds a JSON-ish value from data: a small stack machine whose
// instructions make scalars, maps, slices, shared references, cycles and
// panicking methods.
func fuzzValue(data []byte) any {
	var stack []any
	var containers []any
	pop := func() any {
		if len(stack) == 0 {
			return nil
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v
	}
	for i := 0; i < len(data) && i < 4096; i++ {
		op := data[i]
		arg := 0
		if i+1 < len(data) {
			arg = int(data[i+1])
		}
		switch op % 12 {
		case 0:
			stack = append(stack, nil)
		case 1:
			stack = append(stack, arg%2 == 0)
		case 2:
			stack = append(stack, float64(arg)-128.5)
			i++
		case 3:
			start := min(i+2, len(data))
			n := min(arg, len(data)-start)
			stack = append(stack, string(data[start:start+n]))
			i += 1 + n
		case 4:
			m := map[string]any{}
			for k := 0; k < arg%8 && len(stack) > 0; k++ {
				m[strconv.Itoa(k)+string(rune('a'+arg%26))] = pop()
			}
			containers = append(containers, m)
			stack = append(stack, m)
			i++
		case 5:
			s := make([]any, 0, arg%8)
			for k := 0; k < arg%8 && len(stack) > 0; k++ {
				s = append(s, pop())
			}
			containers = append(containers, s)
			stack = append(stack, s)
			i++
		case 6:
			// Reference an earlier container: sharing, or a cycle once it is
			// stored inside itself.
			if len(containers) > 0 {
				stack = append(stack, containers[arg%len(containers)])
			}
			i++
		case 7:
			// Store the top of the stack into an earlier map: may create a
			// cycle.
			if len(containers) > 0 && len(stack) > 0 {
				if m, ok := containers[arg%len(containers)].(map[string]any); ok {
					m["ref"+strconv.Itoa(arg)] = stack[len(stack)-1]
				}
			}
			i++
		case 8:
			stack = append(stack, panicStringer{})
		case 9:
			stack = append(stack, panicMarshaler{})
		case 10:
			stack = append(stack, json.Number(strconv.Itoa(arg)))
		case 11:
			stack = append(stack, map[any]any{arg: pop(), "k": pop()})
		}
	}
	return map[string]any{"stack": stack}
}

func FuzzStableProgressKey(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2,{"c":"d"}]}`))
	f.Add([]byte{4, 3, 6, 0, 7, 0, 5, 2, 6, 1})
	f.Add([]byte{3, 10, 'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 4, 1, 8, 9, 11, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		var decoded any
		if json.Unmarshal(data, &decoded) == nil {
			check(t, decoded)
		}
		check(t, fuzzValue(data))
	})
}

func check(t *testing.T, v any) {
	t.Helper()
	k := StableProgressKey(v)
	if len(k) > ProgressMaxOutput {
		t.Fatalf("key is %d bytes", len(k))
	}
	if !utf8.ValidString(k) {
		t.Fatalf("key is not valid UTF-8: %q", k)
	}
	if k2 := StableProgressKey(v); k2 != k {
		t.Fatalf("not deterministic:\n%s\n%s", k, k2)
	}
}
