package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// This file decides where a run may go before it starts (DESIGN invariant
// 17): whoever holds the secrets (a worker, serve) lets a run's base URL
// pick only among the full origins that the sealed capability declares in
// its allowed_domains or that its own configuration allows
// (--allow-origin). A bare host in allowed_domains takes the run's entry
// origin, so it can never be what admits that origin.

// BaseOrigin returns the origin of a run's base URL as scheme://host:port:
// scheme and host in lower case, an IP address in its canonical form (an
// IPv6 one in brackets), the default port written out; the path, query and
// fragment do not count. A base URL that is not an absolute http(s) URL
// with a host, or that holds user info ("user@"), a backslash, a percent
// sign in its host, white space or a control character (which a browser
// and Go may read as different hosts), has no origin: an error.
func BaseOrigin(raw string) (string, error) {
	o, err := baseOrigin(raw)
	if err != nil {
		return "", err
	}
	return o.full(), nil
}

// AllowOrigin parses an origin an operator lets secrets go to (cua worker
// --allow-origin): scheme://host[:port] with an http or https scheme, one
// host (no wildcard) and nothing else but a trailing slash. It returns it
// in BaseOrigin's form.
func AllowOrigin(s string) (string, error) {
	if !strings.Contains(s, "://") {
		return "", fmt.Errorf("%q: want an origin scheme://host[:port], e.g. http://127.0.0.1:8811", s)
	}
	o, err := parseAllowed(s)
	if err != nil {
		return "", fmt.Errorf("%q: %w", s, err)
	}
	if strings.Contains(o.host, "*") {
		return "", fmt.Errorf("%q: an allowed origin names one host, without a wildcard", s)
	}
	if o, err = canonical(o); err != nil {
		return "", fmt.Errorf("%q: %w", s, err)
	}
	return o.full(), nil
}

// OriginAllowed reports whether the origin of baseURL is one of the full
// origins (scheme://host[:port], a host of the form *.domain matching its
// subdomains) in lists: a sealed capability's allowed_domains, a worker's
// --allow-origin list. Bare hosts are skipped (they mean "on the run's
// entry origin", which is what is being decided) and an entry that does not
// parse allows nothing. name is baseURL's origin (BaseOrigin), to name in
// a refusal; err is non-nil when baseURL has none.
func OriginAllowed(baseURL string, lists ...[]string) (name string, ok bool, err error) {
	got, err := baseOrigin(baseURL)
	if err != nil {
		return "", false, err
	}
	for _, l := range lists {
		for _, e := range l {
			if !strings.Contains(e, "://") {
				continue
			}
			a, err := parseAllowed(e)
			if err != nil {
				continue
			}
			if a, err = canonical(a); err == nil && a.allows(got, origin{}) {
				return got.full(), true, nil
			}
		}
	}
	return got.full(), false, nil
}

func baseOrigin(raw string) (origin, error) {
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		return origin{}, errors.New("base URL holds white space, a control character or a backslash")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return origin{}, fmt.Errorf("base URL does not parse: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return origin{}, fmt.Errorf("base URL scheme %q: want http or https", u.Scheme)
	case u.User != nil:
		return origin{}, errors.New("base URL holds user info (user@host): refused")
	case u.Opaque != "" || u.Hostname() == "":
		return origin{}, errors.New("base URL has no host")
	case strings.Contains(u.Host, "%"):
		return origin{}, errors.New("base URL host holds a percent sign")
	}
	return canonical(originOf(u))
}

// canonical writes o's port as a plain number and an IP address host in
// its canonical form, so equal origins compare equal.
func canonical(o origin) (origin, error) {
	n, err := strconv.Atoi(o.port)
	if err != nil || n < 1 || n > 65535 {
		return origin{}, fmt.Errorf("port %q: want 1 to 65535", o.port)
	}
	o.port = strconv.Itoa(n)
	if a, err := netip.ParseAddr(o.host); err == nil {
		o.host = a.String()
	}
	return o, nil
}

// full is o as scheme://host:port, an IPv6 host in brackets.
func (o origin) full() string {
	return o.scheme + "://" + joinHostPort(o.host, o.port)
}

// joinHostPort is net.JoinHostPort without importing net: replay links
// policy, and replay links no network package (e2e TestReplayTalksOnlyToTheApp).
func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
