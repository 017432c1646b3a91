package perception

import "strings"

// roleAliases maps Chromium's raw role strings (and older spellings) to the
// canonical role. A role not listed here is lowercased (ASCII).
var roleAliases = map[string]string{
	// Documents and frames.
	"RootWebArea":          "document",
	"WebArea":              "document",
	"Iframe":               "iframe",
	"IframePresentational": "iframe",
	// Text.
	"StaticText":    "text",
	"InlineTextBox": "inlinetextbox", // always dropped
	"LineBreak":     "linebreak",     // always dropped
	"LabelText":     "label",
	// Tables. Layout tables are tables for targeting purposes (row_of must
	// see through legacy layout markup).
	"LayoutTable":       "table",
	"LayoutTableRow":    "row",
	"LayoutTableCell":   "cell",
	"LayoutTableColumn": "column",
	"gridcell":          "cell",
	// Select popups and options.
	"MenuListPopup":         "listbox",
	"MenuListOption":        "option",
	"ListBoxOption":         "option",
	"PopUpButton":           "combobox",
	"ComboBoxMenuButton":    "combobox",
	"ComboBoxSelect":        "combobox",
	"ComboBoxGrouping":      "combobox",
	"TextFieldWithComboBox": "combobox",
	// Controls with older internal names.
	"TextField":          "textbox",
	"SearchBox":          "searchbox",
	"CheckBox":           "checkbox",
	"RadioButton":        "radio",
	"ToggleButton":       "button",
	"DisclosureTriangle": "button",
	"ProgressIndicator":  "progressbar",
	"Splitter":           "separator",
	// Images.
	"image":   "img",
	"Image":   "img",
	"SvgRoot": "img",
	// Containers.
	"GenericContainer":      "generic",
	"Div":                   "generic",
	"SectionWithoutName":    "generic",
	"HeaderAsNonLandmark":   "generic",
	"FooterAsNonLandmark":   "generic",
	"Ignored":               "none",
	"presentation":          "none",
	"Section":               "region",
	"Header":                "banner",
	"Footer":                "contentinfo",
	"Details":               "group",
	"DescriptionList":       "list",
	"DescriptionListTerm":   "term",
	"DescriptionListDetail": "definition",
	"MathMLMath":            "math",
}

// RoleAliases returns a copy of the alias table used by [CanonicalRole].
func RoleAliases() map[string]string {
	m := make(map[string]string, len(roleAliases))
	for k, v := range roleAliases {
		m[k] = v
	}
	return m
}

// CanonicalRole maps a raw role to its canonical form: the alias table
// first, else the role lowercased. It is idempotent: a canonical role maps
// to itself. "searchbox" stays distinct from "textbox"; targeting treats a
// descriptor role "textbox" as also matching "searchbox" nodes.
func CanonicalRole(raw string) string {
	if c, ok := roleAliases[raw]; ok {
		return c
	}
	return strings.ToLower(raw)
}

// IsLandmark reports whether a node of the canonical role, when it has a
// name, defines the Region of the nodes inside it.
func IsLandmark(role string) bool {
	switch role {
	case "main", "navigation", "region", "form", "search", "complementary",
		"banner", "contentinfo", "dialog", "alertdialog":
		return true
	}
	return false
}

// droppable reports whether a non-root node of the canonical role is noise.
// name must be the cleaned name.
func droppable(role, name, value string, focusable, hidden bool) bool {
	if hidden {
		return true
	}
	switch role {
	case "inlinetextbox", "linebreak":
		return true
	case "generic", "none":
		return name == "" && value == "" && !focusable
	case "text":
		return name == "" && value == ""
	}
	return false
}
