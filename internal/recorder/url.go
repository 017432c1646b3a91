package recorder

import (
	"net/url"
	"slices"
	"strings"
)

// templateURL writes a URL relative to {base_url} when it is relative or
// shares the base URL's origin (and path prefix), and replaces input
// literals in its path and query by {input.NAME}. A URL of another host is
// kept absolute and the host is allowed in the policy.
func (k *compiler) templateURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	b := k.base
	if !u.IsAbs() {
		u = b.ResolveReference(u)
	}
	if u.Host == "" {
		return raw
	}
	basePath := strings.TrimRight(b.EscapedPath(), "/")
	path := u.EscapedPath()
	same := strings.EqualFold(u.Scheme, b.Scheme) && strings.EqualFold(u.Host, b.Host) &&
		strings.HasPrefix(path, basePath) && (len(path) == len(basePath) || path[len(basePath)] == '/')
	rest := path
	if same {
		rest = path[len(basePath):]
	}
	if rest == "" {
		rest = "/"
	}
	if u.RawQuery != "" {
		rest += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		rest += "#" + u.EscapedFragment()
	}
	rest = k.substituteInputs(rest)
	if same {
		return "{base_url}" + rest
	}
	host := strings.ToLower(u.Hostname())
	if !slices.Contains(k.hosts, host) && host != strings.ToLower(b.Hostname()) {
		k.hosts = append(k.hosts, host)
		k.note("the run navigated to another origin, %s://%s: it is kept absolute and %s is an allowed domain; check it belongs to the workflow", u.Scheme, u.Host, host)
	}
	return u.Scheme + "://" + u.Host + rest
}

// substituteInputs replaces each whole-token occurrence of an input literal
// (URL-safe, with a name replay can expand) by {input.NAME}.
func (k *compiler) substituteInputs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		hit := ""
		if i == 0 || !isWordByte(s[i-1]) {
			for _, lit := range k.litOrder {
				if urlSafe(lit) && strings.HasPrefix(s[i:], lit) && (i+len(lit) == len(s) || !isWordByte(s[i+len(lit)])) {
					hit = lit
					break
				}
			}
		}
		if hit != "" {
			if name := k.useInput(hit, nil, nil, false, ""); placeholderName(name) {
				b.WriteString("{input." + name + "}")
				i += len(hit)
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func isWordByte(c byte) bool { return isDigit(c) || isLetter(c) }

// urlSafe reports whether a literal can stand for itself in a URL (replay
// path-escapes the input value it substitutes).
func urlSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return s != ""
}

// placeholderName reports whether replay expands {input.NAME} for name: it
// recognises lower-case letters and underscores only.
func placeholderName(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return name != ""
}

// urlLabel names a navigate step after its path.
func urlLabel(pattern string) string {
	p := strings.TrimPrefix(pattern, "{base_url}")
	if u, err := url.Parse(p); err == nil && u.Host != "" {
		p = u.Host + u.Path
	}
	p, _, _ = strings.Cut(p, "?")
	p = strings.NewReplacer("{input.", "", "}", "").Replace(p)
	return p
}
