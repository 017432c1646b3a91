package perception

import "github.com/cuahq/cua/internal/domain"

// CanonicalRole returns the canonical spelling of a role name written by a
// person (a descriptor or predicate role): see [domain.CanonicalRole]. It
// knows no platform's role names: adapters emit canonical roles
// themselves. "searchbox" stays distinct from "textbox"; targeting treats a
// descriptor role "textbox" as also matching "searchbox" nodes.
func CanonicalRole(raw string) string { return domain.CanonicalRole(raw) }

// IsLandmark reports whether a node of the canonical role, when it has a
// name, defines the Region of the nodes inside it (see [domain.IsLandmark]).
func IsLandmark(role string) bool { return domain.IsLandmark(role) }

// droppable reports whether a non-root node of the canonical role is noise.
// name must be the cleaned name.
func droppable(role, name, value string, focusable, hidden bool) bool {
	if hidden {
		return true
	}
	switch role {
	case domain.RoleGeneric, domain.RoleNone:
		return name == "" && value == "" && !focusable
	case domain.RoleText:
		return name == "" && value == ""
	}
	return false
}
