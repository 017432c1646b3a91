package capability

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

var hostRE = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// CheckAllowedDomain checks one policy.allowed_domains entry: a bare host
// ("example.com", "*.example.com", "127.0.0.1") or an origin with a scheme
// and an optional port ("http://127.0.0.1:8811", "https://bank.example").
// A path, query, fragment or user info is refused: an entry names where a
// run may go, not a page.
func CheckAllowedDomain(entry string) error {
	if entry == "" {
		return errors.New("empty entry")
	}
	if !strings.Contains(entry, "://") {
		if strings.ContainsAny(entry, "/?#@:") {
			return errors.New("a bare host has no port, path, query or user info: write scheme://host:port for a port")
		}
		if !hostRE.MatchString(entry) {
			return errors.New("not a host name or address")
		}
		return nil
	}
	u, err := url.Parse(entry)
	if err != nil {
		return fmt.Errorf("not an origin: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q: only http and https", u.Scheme)
	case u.User != nil:
		return errors.New("user info is not allowed")
	case u.Path != "" && u.Path != "/":
		return errors.New("a path is not allowed: name the origin only")
	case u.RawQuery != "" || u.ForceQuery:
		return errors.New("a query is not allowed")
	case u.Fragment != "" || strings.Contains(entry, "#"):
		return errors.New("a fragment is not allowed")
	case u.Hostname() == "" || !hostRE.MatchString(strings.Trim(u.Hostname(), "[]")) && !strings.Contains(u.Hostname(), ":"):
		return errors.New("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q out of range", p)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return errors.New("empty port")
	}
	return nil
}
