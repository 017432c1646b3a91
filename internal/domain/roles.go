package domain

import "strings"

// This file owns the canonical role vocabulary: the role names every
// surface adapter emits in Node.Role and every descriptor, predicate and
// model prompt speaks. It must never know a platform's own spelling
// (Chromium's "RootWebArea", AT-SPI's "push button"): each adapter maps its
// platform's roles to these inside itself, so core packages (perception,
// targeting, policy, runtime, replay) compare roles as plain strings.
//
// The vocabulary is WAI-ARIA 1.2's role names, lowercase, plus the few
// document-structure roles the HTML accessibility mappings add ("document",
// "iframe", "text", "label", ...). An adapter maps a platform role with no
// equivalent to [RoleGeneric] (a container) or, when it is pure layout
// noise, drops the node and hangs its children under the node's parent.

// Canonical roles the engine treats specially. Every constant is its own
// [CanonicalRole].
const (
	// Documents and frames.
	RoleDocument = "document" // the root of a frame's tree
	RoleIframe   = "iframe"   // the element that owns a child frame

	// Text and structure.
	RoleText      = "text" // a run of static text
	RoleLabel     = "label"
	RoleHeading   = "heading"
	RoleParagraph = "paragraph"
	RoleGeneric   = "generic" // an unnamed container
	RoleNone      = "none"    // presentational; dropped unless named, valued or focusable
	RoleGroup     = "group"
	RoleList      = "list"
	RoleListItem  = "listitem"
	RoleImg       = "img"

	// Tables.
	RoleTable        = "table"
	RoleRow          = "row"
	RoleCell         = "cell"
	RoleColumnHeader = "columnheader"
	RoleRowHeader    = "rowheader"

	// Controls.
	RoleButton     = "button"
	RoleLink       = "link"
	RoleTextbox    = "textbox"
	RoleSearchbox  = "searchbox" // kept apart from textbox; a "textbox" descriptor matches both
	RoleCombobox   = "combobox"
	RoleListbox    = "listbox"
	RoleOption     = "option"
	RoleCheckbox   = "checkbox"
	RoleRadio      = "radio"
	RoleSpinbutton = "spinbutton"
	RoleSlider     = "slider"
	RoleMenuItem   = "menuitem"
	RoleTab        = "tab"

	// Dialogs and live regions.
	RoleDialog      = "dialog"
	RoleAlertDialog = "alertdialog"
	RoleAlert       = "alert"
	RoleStatus      = "status"

	// Landmarks (see [IsLandmark]).
	RoleMain          = "main"
	RoleNavigation    = "navigation"
	RoleRegion        = "region"
	RoleForm          = "form"
	RoleSearch        = "search"
	RoleComplementary = "complementary"
	RoleBanner        = "banner"
	RoleContentInfo   = "contentinfo"
)

// roles is the whole vocabulary: the constants above and the rest of
// WAI-ARIA 1.2 and HTML-AAM's role names an adapter may emit.
var roles = map[string]bool{
	RoleDocument: true, RoleIframe: true, RoleText: true, RoleLabel: true,
	RoleHeading: true, RoleParagraph: true, RoleGeneric: true, RoleNone: true,
	RoleGroup: true, RoleList: true, RoleListItem: true, RoleImg: true,
	RoleTable: true, RoleRow: true, RoleCell: true, RoleColumnHeader: true,
	RoleRowHeader: true, RoleButton: true, RoleLink: true, RoleTextbox: true,
	RoleSearchbox: true, RoleCombobox: true, RoleListbox: true, RoleOption: true,
	RoleCheckbox: true, RoleRadio: true, RoleSpinbutton: true, RoleSlider: true,
	RoleMenuItem: true, RoleTab: true, RoleDialog: true, RoleAlertDialog: true,
	RoleAlert: true, RoleStatus: true, RoleMain: true, RoleNavigation: true,
	RoleRegion: true, RoleForm: true, RoleSearch: true, RoleComplementary: true,
	RoleBanner: true, RoleContentInfo: true,
	// The rest of WAI-ARIA 1.2.
	"application": true, "article": true, "blockquote": true, "caption": true,
	"code": true, "definition": true, "deletion": true, "directory": true,
	"emphasis": true, "feed": true, "figure": true, "grid": true,
	"insertion": true, "log": true, "marquee": true, "math": true, "menu": true,
	"menubar": true, "menuitemcheckbox": true, "menuitemradio": true,
	"meter": true, "note": true, "progressbar": true, "radiogroup": true,
	"rowgroup": true, "scrollbar": true, "separator": true, "strong": true,
	"subscript": true, "superscript": true, "switch": true, "tablist": true,
	"tabpanel": true, "term": true, "time": true, "timer": true,
	"toolbar": true, "tooltip": true, "tree": true, "treegrid": true,
	"treeitem": true, "column": true,
}

// roleSynonyms are ARIA's own alternative spellings (not any platform's).
var roleSynonyms = map[string]string{
	"image":        RoleImg,
	"presentation": RoleNone,
	"gridcell":     RoleCell, // targeting treats grid cells as cells
}

// CanonicalRole returns the canonical spelling of an ARIA role name: ARIA's
// synonyms mapped ("image" → "img", "presentation" → "none", "gridcell" →
// "cell"), everything else lowercased. It is idempotent. It is for
// role names people write (descriptors, predicates); it does not know any
// platform's role names, which adapters map themselves.
func CanonicalRole(role string) string {
	lower := strings.ToLower(role)
	if c, ok := roleSynonyms[lower]; ok {
		return c
	}
	return lower
}

// IsRole reports whether role is in the canonical vocabulary, exactly as
// spelled (the conformance suite holds every adapter's output to it).
func IsRole(role string) bool { return roles[role] }

// IsLandmark reports whether a node of the canonical role, when it has a
// name, defines the Region of the nodes inside it.
func IsLandmark(role string) bool {
	switch role {
	case RoleMain, RoleNavigation, RoleRegion, RoleForm, RoleSearch, RoleComplementary,
		RoleBanner, RoleContentInfo, RoleDialog, RoleAlertDialog:
		return true
	}
	return false
}
