package desktop

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
)

// rawInput performs an operator's raw gesture (the console's live
// picture): a click at a screen point, or a key pressed on the focused
// node n.
func (s *Surface) rawInput(ctx context.Context, x, y float64, key string, n *domain.Node) (bool, error) {
	if key == "" {
		return s.rawClick(ctx, x, y)
	}
	return s.rawKey(ctx, n, key)
}

// rawKey sends one key to the focused node: a character (or Space) is
// inserted at the caret of an editable text through EditableText,
// Backspace and Delete remove the character before or after it, Home and
// End and the arrows move the caret; Enter and a Space on a control that
// is not text activate it (pressKey). Other keys need synthesized input,
// which this adapter does not send.
func (s *Surface) rawKey(ctx context.Context, n *domain.Node, key string) (bool, error) {
	if n == nil {
		return false, fmt.Errorf("key %s: no focused node", key)
	}
	r, st, err := s.target(ctx, n)
	if err != nil {
		return false, err
	}
	text := key
	if key == "Space" {
		text = " "
	}
	if !st.has(stEditable) {
		return s.pressKey(ctx, n, key)
	}
	var caret int32
	if err := s.bus.prop(ctx, r, ifText, "CaretOffset", &caret); err != nil {
		return false, fmt.Errorf("%s %q has no Text interface (%v): %w", n.Role, n.Name, err, surface.ErrUnsupported)
	}
	var count int32
	if err := s.bus.prop(ctx, r, ifText, "CharacterCount", &count); err != nil {
		return false, fmt.Errorf("%s %q: character count: %w", n.Role, n.Name, err)
	}
	var ok bool
	switch {
	case utf8.RuneCountInString(text) == 1:
		err = s.bus.call(ctx, r, ifEditableText+".InsertText", []any{&ok}, caret, text, int32(len(text)))
		caret++
	case key == "Backspace" && caret > 0:
		err = s.bus.call(ctx, r, ifEditableText+".DeleteText", []any{&ok}, caret-1, caret)
		caret--
	case key == "Delete" && caret < count:
		err = s.bus.call(ctx, r, ifEditableText+".DeleteText", []any{&ok}, caret, caret+1)
	case key == "Backspace" || key == "Delete":
		return false, nil // nothing to delete: the key does nothing, as in the application
	case key == "Home", key == "ArrowUp":
		caret, ok = 0, true
	case key == "End", key == "ArrowDown":
		caret, ok = count, true
	case key == "ArrowLeft":
		caret, ok = max(caret-1, 0), true
	case key == "ArrowRight":
		caret, ok = min(caret+1, count), true
	case strings.EqualFold(key, "Enter"):
		return s.pressKey(ctx, n, key)
	default:
		return false, fmt.Errorf("key %q on %s %q: %w", key, n.Role, n.Name, surface.ErrUnsupported)
	}
	if err != nil {
		return false, fmt.Errorf("%s %q has no EditableText interface (%v): %w", n.Role, n.Name, err, surface.ErrUnsupported)
	}
	if !ok {
		return false, fmt.Errorf("key %q on %s %q was refused: %w", key, n.Role, n.Name, surface.ErrNotLanded)
	}
	var moved bool
	_ = s.bus.call(ctx, r, ifText+".SetCaretOffset", []any{&moved}, caret)
	return false, nil
}

// focusAt gives keyboard focus to an editable node under a click: a
// person clicks a field to type into it, and its AT-SPI activate action
// would submit it instead.
func (s *Surface) focusAt(ctx context.Context, r ref) (handled bool, err error) {
	var st states
	if err := s.bus.call(ctx, r, ifAccessible+".GetState", []any{(*[]uint32)(&st)}); err != nil || !st.has(stEditable) {
		return false, nil
	}
	var ok bool
	if err := s.bus.call(ctx, r, ifComponent+".GrabFocus", []any{&ok}); err != nil {
		return true, fmt.Errorf("the field at the point has no Component interface (%v): %w", err, surface.ErrUnsupported)
	}
	if !ok {
		return true, fmt.Errorf("the field at the point refused focus: %w", surface.ErrNotLanded)
	}
	return true, nil
}
