package browser

import (
	"unicode/utf8"

	"github.com/chromedp/chromedp/kb"
)

// keyDef is one key as Input.dispatchKeyEvent takes it.
type keyDef struct {
	key, code string
	vk        int64
	text      string
	modifiers int64
}

// namedKeys are the keys press_key accepts by name (DOM key values).
var namedKeys = map[string]keyDef{
	"Enter":      {key: "Enter", code: "Enter", vk: 13, text: "\r"},
	"Tab":        {key: "Tab", code: "Tab", vk: 9},
	"Escape":     {key: "Escape", code: "Escape", vk: 27},
	"Backspace":  {key: "Backspace", code: "Backspace", vk: 8},
	"Delete":     {key: "Delete", code: "Delete", vk: 46},
	"Space":      {key: " ", code: "Space", vk: 32, text: " "},
	"ArrowDown":  {key: "ArrowDown", code: "ArrowDown", vk: 40},
	"ArrowUp":    {key: "ArrowUp", code: "ArrowUp", vk: 38},
	"ArrowLeft":  {key: "ArrowLeft", code: "ArrowLeft", vk: 37},
	"ArrowRight": {key: "ArrowRight", code: "ArrowRight", vk: 39},
	"Home":       {key: "Home", code: "Home", vk: 36},
	"End":        {key: "End", code: "End", vk: 35},
	"PageUp":     {key: "PageUp", code: "PageUp", vk: 33},
	"PageDown":   {key: "PageDown", code: "PageDown", vk: 34},
}

var keyAliases = map[string]string{
	"Return": "Enter", "Esc": "Escape", " ": "Space", "Spacebar": "Space",
	"Down": "ArrowDown", "Up": "ArrowUp", "Left": "ArrowLeft", "Right": "ArrowRight",
}

// lookupKey maps a key name, or a single character, to its key event.
func lookupKey(name string) (keyDef, bool) {
	if a, ok := keyAliases[name]; ok {
		name = a
	}
	if k, ok := namedKeys[name]; ok {
		return k, true
	}
	r, size := utf8.DecodeRuneInString(name)
	if r == utf8.RuneError || size != len(name) {
		return keyDef{}, false
	}
	if k, ok := kb.Keys[r]; ok && k.Print {
		d := keyDef{key: k.Key, code: k.Code, vk: k.Windows, text: k.Text}
		if k.Shift {
			d.modifiers = 8
		}
		return d, true
	}
	return keyDef{key: name, text: name}, true
}
