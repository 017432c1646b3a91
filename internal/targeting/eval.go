package targeting

import (
	"bytes"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// maxPredicateDepth bounds predicate nesting (and so a cyclic predicate
// built in Go).
const maxPredicateDepth = 32

// Eval reports whether p holds on s (a normalised snapshot; nil is an
// empty screen). It is a pure function.
//
//   - node_exists: some rung of [Resolve] yields a candidate (an ambiguous
//     target exists; an out-of-range ordinal does not). node_absent is its
//     negation.
//   - node_has_value: the target resolves to exactly one node and that
//     node's value (an input's Value; else its Value when set; else its
//     visible text) matches under Match: exact (the default; equal after
//     whitespace cleaning), normalized (Fold-equal), contains
//     (Fold-substring), regex (on the cleaned value). A target that is not
//     found or is ambiguous makes the predicate false.
//   - node_checked / node_unchecked / node_selected: the target resolves
//     to exactly one node and its checked state is set / not set, or its
//     selected state is set. Not found or ambiguous: false (an absent
//     checkbox is not "unchecked").
//   - text_present / text_absent: Match over the visible text of the whole
//     snapshot, or of one frame (TextQuery.Frame, a frame path or its last
//     element): contains (the default; substring after whitespace
//     cleaning), normalized (Fold-substring), exact (some text unit equals
//     the cleaned text), regex. The visible text is the space-joined units,
//     in document order, of: text nodes; inputs' values (never a password's
//     or a sensitive node's); named leaf nodes other than img, iframe and
//     document; named dialog, alertdialog and alert nodes without a text
//     child (a synthesized JavaScript dialog); options of a collapsed
//     combobox are skipped; s.Dialog's message counts for the whole
//     snapshot.
//   - url_matches: the pattern matches s.URL or any frame's URL.
//   - http_status_in: s.StatusIn.
//   - all_of (true when empty), any_of (false when empty), not.
//
// A malformed predicate (Kind() == "", nesting deeper than 32, a bad
// regular expression, an unknown match mode, an empty text query, a
// malformed target descriptor) returns a *domain.Error with code
// CAPABILITY_INVALID, whatever the snapshot.
func Eval(s *domain.UiSnapshot, p *domain.Predicate) (bool, error) {
	if err := validate(p, 0); err != nil {
		return false, err
	}
	if s == nil {
		s = &domain.UiSnapshot{}
	}
	return eval(s, p)
}

func malformed(format string, args ...any) error {
	return domain.Errorf(domain.CodeCapabilityInvalid, "malformed predicate: "+format, args...)
}

func validate(p *domain.Predicate, depth int) error {
	if depth > maxPredicateDepth {
		return malformed("nested deeper than %d", maxPredicateDepth)
	}
	switch p.Kind() {
	case "":
		return malformed("it must set exactly one condition")
	case "node_exists":
		return checkDescriptor(p.NodeExists)
	case "node_absent":
		return checkDescriptor(p.NodeAbsent)
	case "node_checked":
		return checkDescriptor(p.NodeChecked)
	case "node_unchecked":
		return checkDescriptor(p.NodeUnchecked)
	case "node_selected":
		return checkDescriptor(p.NodeSelected)
	case "node_has_value":
		if err := checkDescriptor(&p.NodeHasValue.Target); err != nil {
			return err
		}
		if v := p.NodeHasValue; v.Input != "" || strings.Contains(v.Value, unboundMark) {
			return malformed("node_has_value: its value takes an input, unbound: bind the capability's templates first (capability.BindTemplates)")
		}
		return checkMode("node_has_value", p.NodeHasValue.Match, p.NodeHasValue.Value)
	case "text_present":
		return checkText("text_present", p.TextPresent)
	case "text_absent":
		return checkText("text_absent", p.TextAbsent)
	case "url_matches":
		if _, err := compile(p.URLMatches); err != nil {
			return malformed("url_matches: %v", err)
		}
	case "all_of", "any_of":
		for i := range p.AllOf {
			if err := validate(&p.AllOf[i], depth+1); err != nil {
				return err
			}
		}
		for i := range p.AnyOf {
			if err := validate(&p.AnyOf[i], depth+1); err != nil {
				return err
			}
		}
	case "not":
		return validate(p.Not, depth+1)
	}
	return nil
}

func checkDescriptor(d *domain.TargetDescriptor) error {
	r := getResolver()
	defer putResolver(r)
	return r.init(nil, d)
}

func checkMode(kind string, mode domain.MatchMode, text string) error {
	switch mode {
	case "", domain.MatchExact, domain.MatchNormalized, domain.MatchContains:
	case domain.MatchRegex:
		if _, err := compile(text); err != nil {
			return malformed("%s: %v", kind, err)
		}
	default:
		return malformed("%s: unknown match mode %q", kind, mode)
	}
	return nil
}

func checkText(kind string, q *domain.TextQuery) error {
	if perception.CleanName(q.Text) == "" {
		return malformed("%s: empty text", kind)
	}
	if strings.Contains(q.Text, unboundMark) {
		return malformed("%s: an {input.NAME} placeholder is unbound: bind the capability's templates first (capability.BindTemplates)", kind)
	}
	return checkMode(kind, q.Match, q.Text)
}

func eval(s *domain.UiSnapshot, p *domain.Predicate) (bool, error) {
	switch p.Kind() {
	case "node_exists":
		return exists(s, p.NodeExists)
	case "node_absent":
		ok, err := exists(s, p.NodeAbsent)
		return !ok, err
	case "node_has_value":
		return hasValue(s, p.NodeHasValue)
	case "node_checked":
		return hasState(s, p.NodeChecked, func(st domain.NodeStates) bool { return st.Checked })
	case "node_unchecked":
		return hasState(s, p.NodeUnchecked, func(st domain.NodeStates) bool { return !st.Checked })
	case "node_selected":
		return hasState(s, p.NodeSelected, func(st domain.NodeStates) bool { return st.Selected })
	case "text_present":
		return textPresent(s, p.TextPresent)
	case "text_absent":
		ok, err := textPresent(s, p.TextAbsent)
		return !ok, err
	case "url_matches":
		re, err := compile(p.URLMatches)
		if err != nil {
			return false, malformed("url_matches: %v", err)
		}
		if re.MatchString(s.URL) {
			return true, nil
		}
		for _, f := range s.Frames {
			if re.MatchString(f.URL) {
				return true, nil
			}
		}
		return false, nil
	case "http_status_in":
		return s.StatusIn(p.HTTPStatusIn), nil
	case "all_of":
		for i := range p.AllOf {
			if ok, err := eval(s, &p.AllOf[i]); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case "any_of":
		for i := range p.AnyOf {
			if ok, err := eval(s, &p.AnyOf[i]); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case "not":
		ok, err := eval(s, p.Not)
		return !ok && err == nil, err
	}
	return false, malformed("it must set exactly one condition")
}

// exists reports whether some rung yields a candidate for d.
func exists(s *domain.UiSnapshot, d *domain.TargetDescriptor) (bool, error) {
	r := getResolver()
	defer putResolver(r)
	if err := r.init(s, d); err != nil {
		return false, err
	}
	if r.run() == "" {
		return false, nil
	}
	return r.ordinal <= len(r.cands), nil
}

// unique returns the one node d resolves to, or -1.
func unique(s *domain.UiSnapshot, d *domain.TargetDescriptor) (int, error) {
	r := getResolver()
	defer putResolver(r)
	if err := r.init(s, d); err != nil {
		return -1, err
	}
	if r.run() == "" {
		return -1, nil
	}
	switch {
	case r.ordinal > 0 && r.ordinal <= len(r.cands):
		return int(r.cands[r.ordinal-1]), nil
	case r.ordinal == 0 && len(r.cands) == 1:
		return int(r.cands[0]), nil
	}
	return -1, nil
}

// hasState reports whether d resolves to exactly one node whose states
// satisfy want; a target not found or ambiguous makes it false.
func hasState(s *domain.UiSnapshot, d *domain.TargetDescriptor, want func(domain.NodeStates) bool) (bool, error) {
	i, err := unique(s, d)
	if err != nil || i < 0 {
		return false, err
	}
	return want(s.Nodes[i].States), nil
}

func hasValue(s *domain.UiSnapshot, vc *domain.ValueCheck) (bool, error) {
	i, err := unique(s, &vc.Target)
	if err != nil || i < 0 {
		return false, err
	}
	got := valueOf(s, i)
	switch vc.Match {
	case domain.MatchNormalized:
		if want := perception.Fold(vc.Value); want != "" {
			return perception.FoldEqual(got, want), nil
		}
	case domain.MatchContains:
		if want := perception.Fold(vc.Value); want != "" {
			return strings.Contains(perception.Fold(got), want), nil
		}
		return strings.Contains(perception.CleanName(got), perception.CleanName(vc.Value)), nil
	case domain.MatchRegex:
		re, err := compile(vc.Value)
		if err != nil {
			return false, malformed("node_has_value: %v", err)
		}
		return re.MatchString(perception.CleanName(got)), nil
	}
	return perception.CleanName(got) == perception.CleanName(vc.Value), nil
}

func textPresent(s *domain.UiSnapshot, q *domain.TextQuery) (bool, error) {
	switch q.Match {
	case domain.MatchExact:
		want := perception.CleanName(q.Text)
		found := false
		textUnits(s, q.Frame, func(u string) bool {
			found = perception.CleanName(u) == want
			return !found
		})
		return found, nil
	case domain.MatchNormalized:
		if want := perception.Fold(q.Text); want != "" {
			return bytes.Contains(visibleText(s, q.Frame, true), []byte(want)), nil
		}
	case domain.MatchRegex:
		re, err := compile(q.Text)
		if err != nil {
			return false, malformed("text query: %v", err)
		}
		return re.Match(visibleText(s, q.Frame, false)), nil
	}
	return bytes.Contains(visibleText(s, q.Frame, false), []byte(perception.CleanName(q.Text))), nil
}

// visibleText joins the text units of s (or of one frame) with single
// spaces, each unit cleaned, or folded when fold is set.
func visibleText(s *domain.UiSnapshot, frame string, fold bool) []byte {
	var b []byte
	textUnits(s, frame, func(u string) bool {
		mark := len(b)
		if mark > 0 {
			b = append(b, ' ')
		}
		if fold {
			b = perception.AppendFold(b, u)
		} else {
			b = append(b, perception.CleanName(u)...)
		}
		if len(b) == mark+1 {
			b = b[:mark]
		}
		return true
	})
	return b
}

// textUnits calls fn with each unit of visible text, in document order,
// until fn returns false.
func textUnits(s *domain.UiSnapshot, frame string, fn func(string) bool) {
	var aliases []string
	if frame != "" {
		aliases = frameAliases(nil, s, frame)
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.States.Hidden || (frame != "" && !inFrame(n.Frame, frame, aliases)) {
			continue
		}
		var u string
		switch {
		case n.Role == "text":
			u = n.Name
			if u == "" {
				u = n.Value
			}
		case isInput(n):
			if !n.States.Password && !n.Sensitive {
				u = n.Value
			}
		case n.Role == "option" && collapsedOption(s, i):
		case n.Name == "":
		case len(n.Children) == 0:
			switch n.Role {
			case "img", "iframe", "document":
			default:
				u = n.Name
			}
		case n.Role == "dialog" || n.Role == "alertdialog" || n.Role == "alert":
			if !hasTextChild(s, i) {
				u = n.Name
			}
		}
		if u != "" && !fn(u) {
			return
		}
	}
	if s.Dialog != nil && s.Dialog.Message != "" && frame == "" {
		fn(s.Dialog.Message)
	}
}

func hasTextChild(s *domain.UiSnapshot, i int) bool {
	for _, c := range s.Nodes[i].Children {
		if c >= 0 && c < len(s.Nodes) && s.Nodes[c].Role == "text" {
			return true
		}
	}
	return false
}

// collapsedOption reports whether option i belongs to a combobox that is
// not expanded (its options are not on screen).
func collapsedOption(s *domain.UiSnapshot, i int) bool {
	p := s.Nodes[i].Parent
	for steps := 0; steps < 2 && p >= 0 && p < len(s.Nodes); steps++ {
		n := &s.Nodes[p]
		if n.Role == "combobox" {
			return !n.States.Expanded
		}
		p = n.Parent
	}
	return false
}
