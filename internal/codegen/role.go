package codegen

import "github.com/cuahq/cua/internal/domain"

// PlaywrightRoles maps each canonical role a locator may target to the
// ARIA roles Playwright's getByRole accepts for it, in order; a role with
// two entries matches either (a canonical "textbox" descriptor also
// matches a searchbox, a "cell" a gridcell, as targeting does). A
// canonical role missing here is refused: "text" becomes getByText, and
// "document", "iframe", "label", "none" and "column" name nothing a role
// locator can find.
var PlaywrightRoles = map[string][]string{
	domain.RoleTextbox: {"textbox", "searchbox"},
	domain.RoleCell:    {"cell", "gridcell"},
	domain.RoleImg:     {"img"},

	domain.RoleHeading: {"heading"}, domain.RoleParagraph: {"paragraph"}, domain.RoleGeneric: {"generic"},
	domain.RoleGroup: {"group"}, domain.RoleList: {"list"}, domain.RoleListItem: {"listitem"},
	domain.RoleTable: {"table"}, domain.RoleRow: {"row"}, domain.RoleColumnHeader: {"columnheader"},
	domain.RoleRowHeader: {"rowheader"}, domain.RoleButton: {"button"}, domain.RoleLink: {"link"},
	domain.RoleSearchbox: {"searchbox"}, domain.RoleCombobox: {"combobox"}, domain.RoleListbox: {"listbox"},
	domain.RoleOption: {"option"}, domain.RoleCheckbox: {"checkbox"}, domain.RoleRadio: {"radio"},
	domain.RoleSpinbutton: {"spinbutton"}, domain.RoleSlider: {"slider"}, domain.RoleMenuItem: {"menuitem"},
	domain.RoleTab: {"tab"}, domain.RoleDialog: {"dialog"}, domain.RoleAlertDialog: {"alertdialog"},
	domain.RoleAlert: {"alert"}, domain.RoleStatus: {"status"}, domain.RoleMain: {"main"},
	domain.RoleNavigation: {"navigation"}, domain.RoleRegion: {"region"}, domain.RoleForm: {"form"},
	domain.RoleSearch: {"search"}, domain.RoleComplementary: {"complementary"}, domain.RoleBanner: {"banner"},
	domain.RoleContentInfo: {"contentinfo"},

	"application": {"application"}, "article": {"article"}, "blockquote": {"blockquote"},
	"caption": {"caption"}, "code": {"code"}, "definition": {"definition"}, "deletion": {"deletion"},
	"directory": {"directory"}, "emphasis": {"emphasis"}, "feed": {"feed"}, "figure": {"figure"},
	"grid": {"grid"}, "insertion": {"insertion"}, "log": {"log"}, "marquee": {"marquee"},
	"math": {"math"}, "menu": {"menu"}, "menubar": {"menubar"}, "menuitemcheckbox": {"menuitemcheckbox"},
	"menuitemradio": {"menuitemradio"}, "meter": {"meter"}, "note": {"note"},
	"progressbar": {"progressbar"}, "radiogroup": {"radiogroup"}, "rowgroup": {"rowgroup"},
	"scrollbar": {"scrollbar"}, "separator": {"separator"}, "strong": {"strong"},
	"subscript": {"subscript"}, "superscript": {"superscript"}, "switch": {"switch"},
	"tablist": {"tablist"}, "tabpanel": {"tabpanel"}, "term": {"term"}, "time": {"time"},
	"timer": {"timer"}, "toolbar": {"toolbar"}, "tooltip": {"tooltip"}, "tree": {"tree"},
	"treegrid": {"treegrid"}, "treeitem": {"treeitem"},
}

// Unlocatable are the canonical roles no role locator can find.
var Unlocatable = []string{domain.RoleDocument, domain.RoleIframe, domain.RoleLabel, domain.RoleNone, "column"}
