package policy

import (
	"errors"
	"net/url"
	"strings"
)

// origin is a scheme, host and port; an empty scheme or port means "the
// entry origin's" (a bare host in an allowlist).
type origin struct {
	scheme, host, port string
}

func (o origin) String() string {
	s := o.host
	if o.port != "" {
		s += ":" + o.port
	}
	if o.scheme != "" {
		s = o.scheme + "://" + s
	}
	return s
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// originOf is u's origin with its port made explicit.
func originOf(u *url.URL) origin {
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" {
		o.port = defaultPort(o.scheme)
	}
	return o
}

func parseOrigin(s string) (origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return origin{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return origin{}, errors.New("scheme must be http or https")
	}
	return originOf(u), nil
}

// parseAllowed reads one allowed_domains entry: a host ("bank.example",
// "*.bank.example") or an origin ("https://bank.example:8443").
func parseAllowed(s string) (origin, error) {
	if s == "" {
		return origin{}, errors.New("is empty")
	}
	if !strings.Contains(s, "://") {
		if strings.ContainsAny(s, "/:@?#") {
			return origin{}, errors.New("is neither a host name nor scheme://host[:port]")
		}
		return origin{host: strings.ToLower(s)}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return origin{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return origin{}, errors.New("scheme must be http or https")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Hostname() == "" {
		return origin{}, errors.New("an origin has no user, path, query or fragment")
	}
	return originOf(u), nil
}

// allows reports whether the allowlist entry a covers got; a bare host takes
// entry's scheme and port (any, when there is no entry origin).
func (a origin) allows(got, entry origin) bool {
	host := a.host == got.host || (strings.HasPrefix(a.host, "*.") && strings.HasSuffix(got.host, a.host[1:]))
	if !host {
		return false
	}
	if a.scheme == "" {
		if entry.host == "" {
			return true
		}
		return got.scheme == entry.scheme && got.port == entry.port
	}
	return got.scheme == a.scheme && got.port == a.port
}
