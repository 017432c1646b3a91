package domain

import "strings"

// Affix reports whether the name is given as a starts_with / ends_with
// pair (either or both) rather than a value.
func (n *NameMatch) Affix() bool {
	return n != nil && (n.StartsWith != "" || n.EndsWith != "")
}

// HasAffixes reports whether name starts with prefix and ends with suffix
// (an empty one always holds). The two may overlap: "ABA" starts with "AB"
// and ends with "BA". A regular expression built from inputs cannot say
// this (^AB.*BA$ needs four characters at least), which is why names have
// this form.
func HasAffixes(name, prefix, suffix string) bool {
	return strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix)
}
