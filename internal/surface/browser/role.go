package browser

import "github.com/cuahq/cua/internal/domain"

// This file owns the translation of Chromium's accessibility role names to
// the canonical vocabulary of package domain. It is the only place in cua
// that knows Chromium's role spellings; it must never leak one into a
// snapshot.

// chromiumRoles maps Chromium's raw AX role strings (and older spellings)
// to canonical roles. A role not listed here goes through
// [domain.CanonicalRole] (ARIA synonyms, else lowercased).
var chromiumRoles = map[string]string{
	// Documents and frames.
	"RootWebArea":          domain.RoleDocument,
	"WebArea":              domain.RoleDocument,
	"Iframe":               domain.RoleIframe,
	"IframePresentational": domain.RoleIframe,
	// Text.
	"StaticText": domain.RoleText,
	"LabelText":  domain.RoleLabel,
	// Tables. Layout tables are tables for targeting purposes (row_of must
	// see through legacy layout markup).
	"LayoutTable":       domain.RoleTable,
	"LayoutTableRow":    domain.RoleRow,
	"LayoutTableCell":   domain.RoleCell,
	"LayoutTableColumn": "column",
	// Select popups and options.
	"MenuListPopup":         domain.RoleListbox,
	"MenuListOption":        domain.RoleOption,
	"ListBoxOption":         domain.RoleOption,
	"PopUpButton":           domain.RoleCombobox,
	"ComboBoxMenuButton":    domain.RoleCombobox,
	"ComboBoxSelect":        domain.RoleCombobox,
	"ComboBoxGrouping":      domain.RoleCombobox,
	"TextFieldWithComboBox": domain.RoleCombobox,
	// Controls with older internal names.
	"TextField":          domain.RoleTextbox,
	"SearchBox":          domain.RoleSearchbox,
	"CheckBox":           domain.RoleCheckbox,
	"RadioButton":        domain.RoleRadio,
	"ToggleButton":       domain.RoleButton,
	"DisclosureTriangle": domain.RoleButton,
	"ProgressIndicator":  "progressbar",
	"Splitter":           "separator",
	// Images.
	"Image":   domain.RoleImg,
	"SvgRoot": domain.RoleImg,
	// Containers.
	"GenericContainer":      domain.RoleGeneric,
	"Div":                   domain.RoleGeneric,
	"SectionWithoutName":    domain.RoleGeneric,
	"HeaderAsNonLandmark":   domain.RoleGeneric,
	"FooterAsNonLandmark":   domain.RoleGeneric,
	"Ignored":               domain.RoleNone,
	"Section":               domain.RoleRegion,
	"Header":                domain.RoleBanner,
	"Footer":                domain.RoleContentInfo,
	"Details":               domain.RoleGroup,
	"DescriptionList":       domain.RoleList,
	"DescriptionListTerm":   "term",
	"DescriptionListDetail": "definition",
	"MathMLMath":            "math",
}

// chromiumNoise are Chromium roles that duplicate their parent's text (an
// InlineTextBox repeats its StaticText; a LineBreak is "\n"): the adapter
// leaves them out of the snapshot and hangs their children under their
// parent.
var chromiumNoise = map[string]bool{
	"InlineTextBox": true,
	"LineBreak":     true,
}

// axRole returns the canonical role of a Chromium AX role, and whether the
// node is layout noise the snapshot leaves out.
func axRole(raw string) (role string, noise bool) {
	if chromiumNoise[raw] {
		return "", true
	}
	if c, ok := chromiumRoles[raw]; ok {
		return c, false
	}
	return domain.CanonicalRole(raw), false
}
