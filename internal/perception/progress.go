package perception

import (
	"bytes"
	"container/heap"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
)

// Caps of [StableProgressKey].
const (
	// ProgressMaxDepth is how deep objects and arrays are encoded: the
	// value itself is at depth 0, and an object or array at this depth is
	// encoded as the marker "[MaxDepth]".
	ProgressMaxDepth = 8
	// ProgressMaxKeys is how many entries of one object (map, struct) or
	// set are encoded.
	ProgressMaxKeys = 64
	// ProgressMaxArray is how many elements of one array or slice are
	// encoded.
	ProgressMaxArray = 64
	// ProgressMaxString is how many bytes of a string, or of an object key,
	// are encoded.
	ProgressMaxString = 256
	// ProgressMaxOutput bounds the length of the key in bytes.
	ProgressMaxOutput = 16 << 10
)

// Markers [StableProgressKey] writes (each as a JSON string) in place of
// what it does not encode.
const (
	markCircular   = "[Circular]"
	markDepth      = "[MaxDepth]"
	markFunc       = "[func]"
	markChan       = "[chan]"
	markUnsafe     = "[unsafe.Pointer]"
	markPanic      = "[panic]"
	markError      = "[error]"
	markTruncated  = "…[truncated]"
	maxMarshalJSON = 1 << 20 // MarshalJSON output above this is not decoded
)

// StableProgressKey returns a deterministic, bounded projection of v used
// to tell whether an application's state changed (the progress signal of a
// state-driven surface, DESIGN invariant 11). Two values that differ only
// in key or set order map to the same key; values that differ within the
// caps map to different keys.
//
// The key reads like compact JSON:
//
//   - nil, nil pointers, nil maps and nil interfaces are null; booleans are
//     true/false; integers and floats are numbers in their shortest form
//     (so float64(1) and int(1) agree); NaN and ±Inf are the strings "NaN",
//     "+Inf" and "-Inf"; complex numbers are strings such as "(1+2i)";
//     json.Number is its literal;
//   - strings are JSON strings of at most [ProgressMaxString] bytes (cut on
//     a rune boundary); a longer string ends in "…[N bytes]" with its full
//     length, so growth of a long text still shows; invalid UTF-8 becomes
//     U+FFFD; []byte and [N]byte are base64 strings, capped alike;
//   - time.Time is its RFC 3339 (nanosecond) text;
//   - maps and structs are objects with keys in byte order of the full key;
//     keys are capped like strings. A map with string keys uses the keys as
//     they are; a map with other keys uses each key's encoding (so a
//     map[any]any with 1 and "1" keeps both apart). Structs encode their
//     exported fields under their encoding/json names ("-" fields are
//     skipped; an embedded struct is one field named by its type). Only the
//     [ProgressMaxKeys] smallest keys are encoded, followed by the entry
//     "[+N keys]":null;
//   - sets, map[T]struct{} and map[T]bool, are arrays of their members'
//     encodings in byte order (for map[T]bool the members are the keys
//     mapped to true), capped like object keys with a final "[+N members]";
//   - arrays and slices encode their first [ProgressMaxArray] elements and
//     then "[+N items]";
//   - pointers and interfaces are followed; funcs, channels and unsafe
//     pointers are the markers "[func]", "[chan]" and "[unsafe.Pointer]";
//   - a value implementing json.Marshaler is encoded from its MarshalJSON
//     output (decoded, so its key order does not matter either; output above
//     1 MiB or invalid is "[error]"); otherwise encoding.TextMarshaler's
//     text, an error's Error() or a fmt.Stringer's String() is encoded as a
//     string, before the reflective encoding of its kind. A method that
//     panics is encoded as "[panic]" and the encoding goes on.
//
// Bounds. An object or array at depth [ProgressMaxDepth] is "[MaxDepth]",
// and so is what lies behind more than 64 pointers on one path. A
// map, pointer or slice that is its own ancestor is "[Circular]". A node
// reached again by another path (a shared child of a DAG) is encoded once
// per depth and copied afterwards, and the ordered key selection of a map
// is computed once per map, so the work is bounded by the caps and the
// output, not by the number of paths through the input: a walk stops as
// soon as the output reaches [ProgressMaxOutput] bytes, and the key then
// ends in "…[truncated]" within that length. The one cost proportional to
// the input is reading every key of a map once to pick its smallest
// [ProgressMaxKeys] (O(n log 64)). A node reached again copies its first
// encoding at that depth, unless that encoding holds a "[Circular]" that
// points above the node; then it is encoded anew, so every occurrence is
// right for its own path.
//
// StableProgressKey never panics and never mutates v; it is safe for
// concurrent use (as far as v itself may be read concurrently). It does call
// v's own MarshalJSON, MarshalText, Error and String methods, whose cost
// and termination are theirs.
func StableProgressKey(v any) (key string) {
	e := &keyEncoder{
		buf:   make([]byte, 0, 256),
		limit: ProgressMaxOutput - len(markTruncated),
	}
	defer func() {
		// A reflective walk of a hostile value should not panic, but the key
		// must never crash a caller: degrade to a marker.
		if r := recover(); r != nil {
			key = `"` + markPanic + `"`
		}
	}()
	e.value(reflect.ValueOf(v), 0)
	if e.full {
		// Every write is a whole piece of valid UTF-8, so the buffer ends on
		// a rune boundary.
		e.buf = append(e.buf, markTruncated...)
	}
	return string(e.buf)
}

// ident identifies a map, pointer or slice for cycle detection and
// memoization.
type ident struct {
	t   reflect.Type
	ptr uintptr
	n   int
}

type memoKey struct {
	id    ident
	depth int
}

type span struct{ start, end int }

// noCycle is the "lowest ancestor referenced" of an encoding without a
// "[Circular]" marker.
const noCycle = math.MaxInt

// keyEncoder holds the state of one StableProgressKey call.
type keyEncoder struct {
	buf   []byte
	limit int
	full  bool
	path  []ident
	memo  map[memoKey]span
	sel   map[ident]*selection
	// scratch buffer for key encodings.
	kbuf []byte
	// hops counts the pointers followed on the current path.
	hops int
}

// maxPointerHops bounds the pointers followed on one path: a longer chain
// of distinct pointers is "[MaxDepth]".
const maxPointerHops = 64

// write appends s unless that would pass the limit, in which case the
// encoder is full and everything after is dropped.
func (e *keyEncoder) write(s string) {
	if e.full {
		return
	}
	if len(e.buf)+len(s) > e.limit {
		e.full = true
		return
	}
	e.buf = append(e.buf, s...)
}

func (e *keyEncoder) writeBytes(b []byte) {
	if e.full {
		return
	}
	if len(e.buf)+len(b) > e.limit {
		e.full = true
		return
	}
	e.buf = append(e.buf, b...)
}

func (e *keyEncoder) writeByte(c byte) {
	if e.full {
		return
	}
	if len(e.buf)+1 > e.limit {
		e.full = true
		return
	}
	e.buf = append(e.buf, c)
}

func (e *keyEncoder) marker(m string) { e.writeString(m) }

// writeString appends s as a capped JSON string.
func (e *keyEncoder) writeString(s string) {
	if e.full {
		return
	}
	e.kbuf = appendCappedString(e.kbuf[:0], s)
	e.writeBytes(e.kbuf)
}

var (
	stringType      = reflect.TypeFor[string]()
	anyMapType      = reflect.TypeFor[map[string]any]()
	boolType        = reflect.TypeFor[bool]()
	float64Type     = reflect.TypeFor[float64]()
	timeType        = reflect.TypeFor[time.Time]()
	numberType      = reflect.TypeFor[json.Number]()
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	textMarshalType = reflect.TypeFor[encoding.TextMarshaler]()
	errorType       = reflect.TypeFor[error]()
	stringerType    = reflect.TypeFor[fmt.Stringer]()
	emptyStructType = reflect.TypeFor[struct{}]()
)

// value encodes v at depth and returns the depth of the lowest ancestor a
// "[Circular]" inside refers to (noCycle when none).
func (e *keyEncoder) value(v reflect.Value, depth int) int {
	if e.full {
		return noCycle
	}
	// Interfaces: follow to the dynamic value.
	for v.IsValid() && v.Kind() == reflect.Interface {
		if v.IsNil() {
			e.write("null")
			return noCycle
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		e.write("null")
		return noCycle
	}
	// Fast paths for what encoding/json decodes into.
	switch t := v.Type(); t {
	case stringType:
		e.writeString(v.String())
		return noCycle
	case numberType:
		e.number(v.String())
		return noCycle
	case boolType:
		e.bool(v.Bool())
		return noCycle
	case float64Type:
		e.float(v.Float(), 64)
		return noCycle
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		e.write("null")
		return noCycle
	}
	if v.Type() == timeType && v.CanInterface() {
		e.writeString(v.Interface().(time.Time).Format(time.RFC3339Nano))
		return noCycle
	}
	if done, low := e.methods(v, depth); done {
		return low
	}
	switch v.Kind() {
	case reflect.Bool:
		e.bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.kbuf = strconv.AppendInt(e.kbuf[:0], v.Int(), 10)
		e.writeBytes(e.kbuf)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.kbuf = strconv.AppendUint(e.kbuf[:0], v.Uint(), 10)
		e.writeBytes(e.kbuf)
	case reflect.Float32:
		e.float(v.Float(), 32)
	case reflect.Float64:
		e.float(v.Float(), 64)
	case reflect.Complex64, reflect.Complex128:
		e.writeString(strconv.FormatComplex(v.Complex(), 'g', -1, v.Type().Bits()))
	case reflect.String:
		e.writeString(v.String())
	case reflect.Func:
		e.marker(markFunc)
	case reflect.Chan:
		e.marker(markChan)
	case reflect.UnsafePointer:
		e.marker(markUnsafe)
	case reflect.Pointer:
		// Following a pointer does not deepen the encoding, so a chain of
		// distinct pointers is bounded on its own.
		if e.hops >= maxPointerHops {
			e.marker(markDepth)
			return noCycle
		}
		return e.shared(v, depth, ident{t: v.Type(), ptr: v.Pointer()}, func() int {
			e.hops++
			defer func() { e.hops-- }()
			return e.value(v.Elem(), depth)
		})
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			e.byteString(v)
			return noCycle
		}
		if v.Len() == 0 {
			e.write("[]")
			return noCycle
		}
		return e.shared(v, depth, ident{t: v.Type(), ptr: v.Pointer(), n: v.Len()}, func() int {
			return e.array(v, depth)
		})
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			e.byteString(v)
			return noCycle
		}
		return e.array(v, depth)
	case reflect.Map:
		return e.shared(v, depth, ident{t: v.Type(), ptr: v.Pointer()}, func() int {
			return e.mapValue(v, depth)
		})
	case reflect.Struct:
		return e.structValue(v, depth)
	default:
		e.write("null")
	}
	return noCycle
}

// shared encodes a map, pointer or slice: "[Circular]" when it is its own
// ancestor, a copy of its earlier encoding at this depth when there is one,
// else enc(), remembered when it is complete and self-contained.
func (e *keyEncoder) shared(v reflect.Value, depth int, id ident, enc func() int) int {
	for d, a := range e.path {
		if a == id {
			e.marker(markCircular)
			return d
		}
	}
	mk := memoKey{id: id, depth: depth}
	if sp, ok := e.memo[mk]; ok {
		e.writeBytes(e.buf[sp.start:sp.end])
		return noCycle
	}
	start := len(e.buf)
	e.path = append(e.path, id)
	low := enc()
	e.path = e.path[:len(e.path)-1]
	// e.path had len(depth-of-this-node) entries before the append; a
	// reference to an entry at or above that index is a reference to this
	// node or a descendant of it on the path.
	self := len(e.path)
	if !e.full && low >= self {
		if e.memo == nil {
			e.memo = make(map[memoKey]span)
		}
		e.memo[mk] = span{start, len(e.buf)}
		return noCycle
	}
	if low >= self {
		return noCycle
	}
	return low
}

// methods encodes v through json.Marshaler, encoding.TextMarshaler, error
// or fmt.Stringer when v implements one. It reports whether it did.
func (e *keyEncoder) methods(v reflect.Value, depth int) (bool, int) {
	if !v.CanInterface() {
		return false, noCycle
	}
	t := v.Type()
	switch {
	case t.Implements(marshalerType):
		raw, ok := callMarshalJSON(v)
		if !ok {
			e.marker(markPanic)
			return true, noCycle
		}
		if raw == nil || len(raw) > maxMarshalJSON {
			e.marker(markError)
			return true, noCycle
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var decoded any
		if err := dec.Decode(&decoded); err != nil {
			e.marker(markError)
			return true, noCycle
		}
		// A freshly decoded value shares nothing with v: encode it as a new
		// tree at this depth.
		return true, e.value(reflect.ValueOf(decoded), depth)
	case t.Implements(textMarshalType):
		text, ok := callText(v)
		if !ok {
			e.marker(markPanic)
			return true, noCycle
		}
		if text == nil {
			e.marker(markError)
			return true, noCycle
		}
		e.writeString(string(text))
		return true, noCycle
	case t.Implements(errorType), t.Implements(stringerType):
		s, ok := callString(v, t.Implements(errorType))
		if !ok {
			e.marker(markPanic)
			return true, noCycle
		}
		e.writeString(s)
		return true, noCycle
	}
	return false, noCycle
}

func callMarshalJSON(v reflect.Value) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		return nil, true
	}
	return b, true
}

func callText(v reflect.Value) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return nil, true
	}
	if b == nil {
		b = []byte{}
	}
	return b, true
}

func callString(v reflect.Value, isErr bool) (out string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = "", false
		}
	}()
	if isErr {
		return v.Interface().(error).Error(), true
	}
	return v.Interface().(fmt.Stringer).String(), true
}

func (e *keyEncoder) bool(b bool) {
	if b {
		e.write("true")
	} else {
		e.write("false")
	}
}

func (e *keyEncoder) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		e.write(`"NaN"`)
	case math.IsInf(f, 1):
		e.write(`"+Inf"`)
	case math.IsInf(f, -1):
		e.write(`"-Inf"`)
	default:
		e.kbuf = strconv.AppendFloat(e.kbuf[:0], f, 'g', -1, bits)
		e.writeBytes(e.kbuf)
	}
}

// number writes a json.Number: its literal when it is a valid JSON number,
// else a string.
func (e *keyEncoder) number(s string) {
	if domain.ValidJSONNumber(s) && len(s) <= ProgressMaxString {
		e.write(s)
		return
	}
	e.writeString(s)
}

// byteString writes a []byte or [N]byte as a capped base64 string.
func (e *keyEncoder) byteString(v reflect.Value) {
	n := v.Len()
	// 192 bytes encode to exactly 256 base64 characters.
	const maxBytes = ProgressMaxString / 4 * 3
	m := min(n, maxBytes)
	raw := make([]byte, m)
	if v.Kind() == reflect.Slice {
		reflect.Copy(reflect.ValueOf(raw), v.Slice(0, m))
	} else {
		for i := range m {
			raw[i] = byte(v.Index(i).Uint())
		}
	}
	e.kbuf = append(e.kbuf[:0], '"')
	e.kbuf = base64.StdEncoding.AppendEncode(e.kbuf, raw)
	if n > m {
		e.kbuf = append(e.kbuf, "…["...)
		e.kbuf = strconv.AppendInt(e.kbuf, int64(n), 10)
		e.kbuf = append(e.kbuf, " bytes]"...)
	}
	e.kbuf = append(e.kbuf, '"')
	e.writeBytes(e.kbuf)
}

// array writes the first ProgressMaxArray elements of an array or slice.
func (e *keyEncoder) array(v reflect.Value, depth int) int {
	if depth >= ProgressMaxDepth {
		e.marker(markDepth)
		return noCycle
	}
	n := v.Len()
	low := noCycle
	e.writeByte('[')
	for i := 0; i < n && i < ProgressMaxArray && !e.full; i++ {
		if i > 0 {
			e.writeByte(',')
		}
		low = min(low, e.value(v.Index(i), depth+1))
	}
	if n > ProgressMaxArray {
		e.writeByte(',')
		e.marker("[+" + strconv.Itoa(n-ProgressMaxArray) + " items]")
	}
	e.writeByte(']')
	return low
}

// selection is the ordered part of a map that is encoded.
type selection struct {
	keys  []string        // encoded keys (full, not capped), sorted
	vals  []reflect.Value // the values of those keys, in the same order
	total int             // entries (members, for a set) in the map
	set   bool
}

// isSet reports whether a map type is a set: map[T]struct{} or map[T]bool.
func isSet(t reflect.Type) bool {
	et := t.Elem()
	return et == emptyStructType || et.Kind() == reflect.Bool
}

func (e *keyEncoder) mapValue(v reflect.Value, depth int) int {
	if depth >= ProgressMaxDepth {
		e.marker(markDepth)
		return noCycle
	}
	id := ident{t: v.Type(), ptr: v.Pointer()}
	sel := e.sel[id]
	if sel == nil {
		sel = e.selectKeys(v)
		if e.sel == nil {
			e.sel = make(map[ident]*selection)
		}
		e.sel[id] = sel
	}
	low := noCycle
	if sel.set {
		e.writeByte('[')
		for i, k := range sel.keys {
			if e.full {
				break
			}
			if i > 0 {
				e.writeByte(',')
			}
			e.keyLiteral(v.Type().Key(), k)
		}
		if more := sel.total - len(sel.keys); more > 0 {
			if len(sel.keys) > 0 {
				e.writeByte(',')
			}
			e.marker("[+" + strconv.Itoa(more) + " members]")
		}
		e.writeByte(']')
		return low
	}
	e.writeByte('{')
	for i, k := range sel.keys {
		if e.full {
			break
		}
		if i > 0 {
			e.writeByte(',')
		}
		e.writeString(k)
		e.writeByte(':')
		low = min(low, e.value(sel.vals[i], depth+1))
	}
	if more := sel.total - len(sel.keys); more > 0 {
		if len(sel.keys) > 0 {
			e.writeByte(',')
		}
		e.marker("[+" + strconv.Itoa(more) + " keys]")
		e.write(":null")
	}
	e.writeByte('}')
	return low
}

// keyLiteral writes a set member: the string for a string-kind key type,
// else the member's encoding as it is (already JSON).
func (e *keyEncoder) keyLiteral(kt reflect.Type, k string) {
	if kt.Kind() == reflect.String {
		e.writeString(k)
		return
	}
	e.write(k)
}

// selectKeys reads every key of map v once and keeps the ProgressMaxKeys
// smallest encodings, with a bounded max-heap.
func (e *keyEncoder) selectKeys(v reflect.Value) *selection {
	kt := v.Type().Key()
	sel := &selection{set: isSet(v.Type())}
	h := &keyHeap{}
	if v.Type() == anyMapType && v.CanInterface() {
		// What encoding/json decodes into: range natively, without a
		// reflect.Value per entry.
		for k, val := range v.Interface().(map[string]any) {
			sel.total++
			if h.Len() == ProgressMaxKeys && k >= (*h)[0].s {
				continue
			}
			ent := keyEntry{s: k, v: reflect.ValueOf(val)}
			if h.Len() < ProgressMaxKeys {
				heap.Push(h, ent)
			} else {
				(*h)[0] = ent
				heap.Fix(h, 0)
			}
		}
		return sel.sorted(h)
	}
	boolSet := sel.set && v.Type().Elem().Kind() == reflect.Bool
	iter := v.MapRange()
	for iter.Next() {
		if boolSet && !iter.Value().Bool() {
			continue
		}
		sel.total++
		ent := keyEntry{s: e.keyString(kt, iter.Key()), v: iter.Value()}
		if h.Len() < ProgressMaxKeys {
			heap.Push(h, ent)
			continue
		}
		if h.less(ent, (*h)[0]) {
			(*h)[0] = ent
			heap.Fix(h, 0)
		}
	}
	return sel.sorted(h)
}

// sorted fills the selection from the kept entries, in key order.
func (sel *selection) sorted(h *keyHeap) *selection {
	ents := []keyEntry(*h)
	sort.Slice(ents, func(i, j int) bool { return h.less(ents[i], ents[j]) })
	sel.keys = make([]string, len(ents))
	sel.vals = make([]reflect.Value, len(ents))
	for i, en := range ents {
		sel.keys[i], sel.vals[i] = en.s, en.v
	}
	return sel
}

// keyString returns the encoding a map key is sorted and written by: the
// string itself for string-kind keys, else the key's compact encoding
// (strings quoted), capped at a few times ProgressMaxString.
func (e *keyEncoder) keyString(kt reflect.Type, k reflect.Value) string {
	if kt.Kind() == reflect.String {
		return k.String()
	}
	sub := &keyEncoder{buf: make([]byte, 0, 16), limit: 4 * ProgressMaxString}
	func() {
		defer func() {
			if recover() != nil {
				sub.buf = append(sub.buf[:0], `"`+markPanic+`"`...)
			}
		}()
		// Keys are encoded as fresh trees, two levels deep at most.
		sub.value(k, ProgressMaxDepth-2)
	}()
	return string(sub.buf)
}

type keyEntry struct {
	s string        // the key's encoding
	v reflect.Value // the value stored under the key
}

// keyHeap is a max-heap of key entries (the root is the largest kept key).
type keyHeap []keyEntry

// less orders entries by key encoding. Distinct keys with the same
// encoding (NaN keys, pointers to equal values) are ordered by their
// values' encodings so the selection stays deterministic.
func (h *keyHeap) less(a, b keyEntry) bool {
	if a.s != b.s {
		return a.s < b.s
	}
	return tieString(a.v) < tieString(b.v)
}

// tieString is the bounded encoding of a map value that breaks a tie
// between keys that encode alike.
func tieString(v reflect.Value) string {
	sub := &keyEncoder{buf: make([]byte, 0, 16), limit: 4 * ProgressMaxString}
	defer func() { _ = recover() }()
	sub.value(v, ProgressMaxDepth-2)
	return string(sub.buf)
}

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h.less(h[j], h[i]) }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(keyEntry)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// structField is one encoded field of a struct type.
type structField struct {
	name  string
	index int
}

func (e *keyEncoder) structValue(v reflect.Value, depth int) int {
	if depth >= ProgressMaxDepth {
		e.marker(markDepth)
		return noCycle
	}
	fields := structFields(v.Type())
	low := noCycle
	e.writeByte('{')
	n := min(len(fields), ProgressMaxKeys)
	for i := 0; i < n && !e.full; i++ {
		if i > 0 {
			e.writeByte(',')
		}
		e.writeString(fields[i].name)
		e.writeByte(':')
		low = min(low, e.value(v.Field(fields[i].index), depth+1))
	}
	if more := len(fields) - n; more > 0 {
		e.writeByte(',')
		e.marker("[+" + strconv.Itoa(more) + " keys]")
		e.write(":null")
	}
	e.writeByte('}')
	return low
}

// structFields returns the exported fields of t under their encoding/json
// names, sorted by name (ties by field order).
func structFields(t reflect.Type) []structField {
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := cutComma(tag)
			if n == "-" && tag == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		out = append(out, structField{name: name, index: i})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func cutComma(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// appendCappedString appends s as a JSON string of at most
// ProgressMaxString bytes of s, marking a cut with "…[N bytes]".
func appendCappedString(dst []byte, s string) []byte {
	n := len(s)
	cut := n
	if n > ProgressMaxString {
		cut = ProgressMaxString
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	dst = append(dst, '"')
	dst = appendEscaped(dst, s[:cut])
	if cut < n {
		dst = append(dst, "…["...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, " bytes]"...)
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s with JSON string escapes; invalid UTF-8 becomes
// U+FFFD.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}
