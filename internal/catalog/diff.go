package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// ChangeKind says how a part of a capability changed.
type ChangeKind string

// Change kinds.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
	Moved   ChangeKind = "moved" // the same steps in another order
)

// Change is one semantic difference between two capabilities: a step, an
// input, an outcome... added or removed, or one field of it changed.
type Change struct {
	Kind ChangeKind
	// Path names the part: "risk", "entrypoint.url_pattern",
	// "steps[confirm]", "steps[confirm].target", "inputs[amount].maximum".
	Path string
	// Before and After are the part's compact JSON ("" when it is absent on
	// that side); for Moved, the step ids in order.
	Before, After string
	// RiskUp marks a change that raises a declared risk: a step's or the
	// capability's risk rising, a new step that is not safe, or a gate
	// taken away.
	RiskUp bool
}

// String formats c as one line: "+ path: after", "- path: before",
// "~ path: before -> after", "↕ path: before -> after". A long value is
// shortened; RiskUp adds " [risk up]".
func (c Change) String() string {
	var s string
	switch c.Kind {
	case Added:
		s = "+ " + c.Path + ": " + short(c.After)
	case Removed:
		s = "- " + c.Path + ": " + short(c.Before)
	case Moved:
		s = "↕ " + c.Path + ": " + c.Before + " -> " + c.After
	default:
		s = "~ " + c.Path + ": " + short(c.Before) + " -> " + short(c.After)
	}
	if c.RiskUp {
		s += " [risk up]"
	}
	return s
}

// keyedLists are the capability's lists whose elements have an identity,
// and the field that holds it. A prerequisite is known by the id it calls,
// so a new version or pin of the same capability shows as a change.
var keyedLists = map[string]string{
	"inputs":        "name",
	"outputs":       "name",
	"steps":         "id",
	"outcomes":      "code",
	"recovery":      "id",
	"prerequisites": "capability",
}

// identity is the key of e in a keyed list: the key field's value, without
// the @version of a prerequisite's reference.
func identity(e map[string]any, key string) string {
	id := fmt.Sprint(e[key])
	if key == "capability" {
		id, _, _ = strings.Cut(id, "@")
	}
	return id
}

// ignored fields describe where a capability came from and its seal, not
// what it does.
var ignored = map[string]bool{"content_hash": true, "provenance": true}

// Diff returns what changed from a to b, semantically: list elements are
// matched by identity (a step by id, an input by name, an outcome by code),
// then compared field by field; the order of steps is compared on its own.
// Changes come in a stable order: top-level fields, then each list.
func Diff(a, b *domain.Capability) ([]Change, error) {
	am, err := asMap(a)
	if err != nil {
		return nil, fmt.Errorf("diff: first capability: %w", err)
	}
	bm, err := asMap(b)
	if err != nil {
		return nil, fmt.Errorf("diff: second capability: %w", err)
	}
	var out []Change
	for _, k := range unionKeys(am, bm) {
		if ignored[k] {
			continue
		}
		if key, ok := keyedLists[k]; ok {
			out = append(out, diffList(k, key, list(am[k]), list(bm[k]))...)
			continue
		}
		out = append(out, diffValue(k, am[k], bm[k], true)...)
	}
	return out, nil
}

// diffValue compares one value; with descend, two objects are compared key
// by key one level down.
func diffValue(path string, a, b any, descend bool) []Change {
	ao, aok := a.(map[string]any)
	bo, bok := b.(map[string]any)
	if descend && aok && bok {
		var out []Change
		for _, k := range unionKeys(ao, bo) {
			out = append(out, diffValue(path+"."+k, ao[k], bo[k], false)...)
		}
		return out
	}
	as, bs := compact(a), compact(b)
	switch {
	case as == bs:
		return nil
	case a == nil:
		return []Change{{Kind: Added, Path: path, After: bs}}
	case b == nil:
		return []Change{{Kind: Removed, Path: path, Before: as}}
	}
	c := Change{Kind: Changed, Path: path, Before: as, After: bs}
	switch {
	case strings.HasSuffix(path, ".risk") || path == "risk":
		c.RiskUp = riskRank(a) < riskRank(b)
	case strings.HasSuffix(path, ".gate"):
		c.RiskUp = a == true && b != true // a reviewer's stop taken away
	}
	return []Change{c}
}

// diffList matches the elements of two keyed lists by their key field.
func diffList(name, key string, a, b []map[string]any) []Change {
	ai, bi := index(a, key), index(b, key)
	var out []Change
	for _, e := range a {
		id := identity(e, key)
		other, ok := bi[id]
		path := name + "[" + id + "]"
		if !ok {
			out = append(out, Change{Kind: Removed, Path: path, Before: compact(e)})
			continue
		}
		for _, k := range unionKeys(e, other) {
			if k == "for_each" {
				out = append(out, diffLoop(path, e[k], other[k])...)
				continue
			}
			out = append(out, diffValue(path+"."+k, e[k], other[k], false)...)
		}
	}
	for _, e := range b {
		id := identity(e, key)
		if _, ok := ai[id]; ok {
			continue
		}
		c := Change{Kind: Added, Path: name + "[" + id + "]", After: compact(e)}
		c.RiskUp = addedRisky(e)
		out = append(out, c)
	}
	if before, after := commonOrder(a, key, bi), commonOrder(b, key, ai); !slices.Equal(before, after) {
		out = append(out, Change{Kind: Moved, Path: name, Before: strings.Join(before, ", "), After: strings.Join(after, ", ")})
	}
	return out
}

// commonOrder lists the keys of xs, in order, that also appear in other.
func commonOrder(xs []map[string]any, key string, other map[string]map[string]any) []string {
	var ids []string
	for _, e := range xs {
		if id := identity(e, key); other[id] != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func index(xs []map[string]any, key string) map[string]map[string]any {
	m := make(map[string]map[string]any, len(xs))
	for _, e := range xs {
		m[identity(e, key)] = e
	}
	return m
}

func riskRank(v any) int {
	switch v {
	case string(domain.RiskElevated):
		return 1
	case string(domain.RiskIrreversible):
		return 2
	}
	return 0
}

func asMap(c *domain.Capability) (map[string]any, error) {
	if c == nil {
		return nil, fmt.Errorf("no capability")
	}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func list(v any) []map[string]any {
	xs, _ := v.([]any)
	out := make([]map[string]any, 0, len(xs))
	for _, x := range xs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// compact is v's JSON with sorted keys ("" for nil).
func compact(v any) string {
	if v == nil {
		return ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func short(s string) string {
	const limit = 160
	if r := []rune(s); len(r) > limit {
		return string(r[:limit]) + "…"
	}
	return s
}
