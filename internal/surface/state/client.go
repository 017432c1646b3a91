package state

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrOrigin is returned (wrapped) for a request to, or an answer from, an
// origin the surface may not talk to, and for a redirect, which the surface
// never follows: a redirected act would carry its body (a typed secret)
// somewhere else.
var ErrOrigin = errors.New("state: origin not allowed")

// Option configures New.
type Option func(*Surface) error

// WithAllowedOrigins sets the origins (scheme://host[:port], e.g.
// "http://127.0.0.1:8811") the surface may send requests to and accept
// answers from. The default, and what an empty list means, is the base
// URL's origin only. New refuses a base URL outside the list, and a
// malformed entry, naming it.
func WithAllowedOrigins(origins ...string) Option {
	return func(s *Surface) error {
		s.origins = s.origins[:0]
		for _, o := range origins {
			norm, err := parseOrigin(o)
			if err != nil {
				return err
			}
			s.origins = append(s.origins, norm)
		}
		return nil
	}
}

// parseOrigin validates an allowed origin and returns it in the form
// origin returns.
func parseOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil {
		return "", fmt.Errorf("state: allowed origin %q: %w", o, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("state: allowed origin %q: want scheme://host[:port]", o)
	}
	return origin(u), nil
}

// origin returns u's scheme://host:port, lower case, with the scheme's
// default port made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// noRedirects returns a copy of client (a new one when nil) that never
// follows a redirect: the 3xx answer itself comes back, and do refuses it.
func noRedirects(client *http.Client) *http.Client {
	c := &http.Client{}
	if client != nil {
		*c = *client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

func (s *Surface) allowed(u *url.URL) bool { return slices.Contains(s.origins, origin(u)) }

// do sends req if its origin is allowed and returns the answer if it came
// from that origin and is not a redirect. The body of a refused answer is
// closed.
func (s *Surface) do(req *http.Request) (*http.Response, error) {
	if !s.allowed(req.URL) {
		return nil, fmt.Errorf("%w: %s is not among the allowed origins", ErrOrigin, origin(req.URL))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.Request != nil && resp.Request.URL != nil && origin(resp.Request.URL) != origin(req.URL) {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: the answer came from %s", ErrOrigin, origin(resp.Request.URL))
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		resp.Body.Close()
		where := "elsewhere"
		if loc, err := resp.Location(); err == nil {
			where = origin(loc)
		}
		return nil, fmt.Errorf("%w: the application answered %s (a redirect to %s), which is never followed", ErrOrigin, resp.Status, where)
	}
	return resp, nil
}
