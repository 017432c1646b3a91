package desktop

import "github.com/cuahq/cua/internal/domain"

// atspiRoles maps AT-SPI role names (Accessible.GetRoleName; GTK's bridge
// passes ATK's spelling on, which differs for a few) to canonical roles. A role not listed is layout with no canonical equivalent:
// [domain.RoleGeneric], which perception drops when it is unnamed.
var atspiRoles = map[string]string{
	"frame":               domain.RoleDocument, // a top-level window: the root of its frame
	"window":              domain.RoleDocument,
	"document frame":      domain.RoleDocument,
	"document web":        domain.RoleDocument,
	"document text":       domain.RoleDocument,
	"heading":             domain.RoleHeading,
	"label":               domain.RoleText,
	"static":              domain.RoleText,
	"caption":             "caption",
	"paragraph":           domain.RoleParagraph,
	"text":                domain.RoleTextbox, // an entry, not static text
	"entry":               domain.RoleTextbox,
	"password text":       domain.RoleTextbox,
	"editbar":             domain.RoleTextbox,
	"combo box":           domain.RoleCombobox,
	"list":                domain.RoleList,
	"list box":            domain.RoleListbox,
	"list item":           domain.RoleListItem,
	"menu":                "menu",
	"menu bar":            "menubar",
	"menu item":           domain.RoleMenuItem,
	"check menu item":     "menuitemcheckbox",
	"radio menu item":     "menuitemradio",
	"push button":         domain.RoleButton,
	"button":              domain.RoleButton,
	"toggle button":       domain.RoleButton,
	"check box":           domain.RoleCheckbox,
	"radio button":        domain.RoleRadio,
	"spin button":         domain.RoleSpinbutton,
	"slider":              domain.RoleSlider,
	"switch":              "switch",
	"page tab":            domain.RoleTab,
	"page tab list":       "tablist",
	"link":                domain.RoleLink,
	"status bar":          domain.RoleStatus,
	"statusbar":           domain.RoleStatus, // ATK's spelling, which atk-bridge passes on
	"notification":        domain.RoleAlert,
	"alert":               domain.RoleAlertDialog,
	"dialog":              domain.RoleDialog,
	"file chooser":        domain.RoleDialog,
	"table":               domain.RoleTable,
	"tree table":          "treegrid",
	"tree":                "tree",
	"tree item":           "treeitem",
	"table row":           domain.RoleRow,
	"table cell":          domain.RoleCell,
	"table column header": domain.RoleColumnHeader,
	"table row header":    domain.RoleRowHeader,
	"tool bar":            "toolbar",
	"tool tip":            "tooltip",
	"image":               domain.RoleImg,
	"icon":                domain.RoleImg,
	"progress bar":        "progressbar",
	"scroll bar":          "scrollbar",
	"separator":           "separator",
	"form":                domain.RoleForm,
	"grouping":            domain.RoleGroup,
	"panel":               domain.RoleGeneric,
	"filler":              domain.RoleGeneric,
	"section":             domain.RoleGeneric,
}

// Role returns the canonical role of an AT-SPI role name.
func Role(atspi string) string {
	if c, ok := atspiRoles[atspi]; ok {
		return c
	}
	return domain.RoleGeneric
}
