package observer

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Mode is how far the observer's pages reach.
type Mode string

// Modes of the exposure matrix.
const (
	// ModeLoopback: bound to a loopback address, reachable only from this
	// machine; every run is served (only share_ready ones under Safe).
	ModeLoopback Mode = "loopback"
	// ModeExposed: reachable through a public origin whose edge the
	// operator secures; every run is served unless Safe.
	ModeExposed Mode = "exposed"
	// ModeShareSafeOpen: reachable through a public origin with no edge
	// auth; only runs that pass evidence.VerifyDeployment are served.
	ModeShareSafeOpen Mode = "share-safe-open"
)

// DefaultAddr is where the observer binds unless told otherwise.
const DefaultAddr = "127.0.0.1:8813"

// Refusal codes of the exposure matrix, one per refused combination.
const (
	CodeAddrInvalid               = "CUA_OBSERVE_ADDR_INVALID"
	CodeAddrNotLoopback           = "CUA_OBSERVE_ADDR_NOT_LOOPBACK"
	CodePublicURLInvalid          = "CUA_OBSERVE_PUBLIC_URL_INVALID"
	CodePublicURLRequiresExpose   = "CUA_OBSERVE_PUBLIC_URL_REQUIRES_EXPOSE"
	CodeEdgeAuthRequiresPublicURL = "CUA_OBSERVE_EDGE_AUTH_REQUIRES_PUBLIC_URL"
	CodeExposeRequiresOrigin      = "CUA_OBSERVE_EXPOSE_REQUIRES_ORIGIN"
	CodeExposeRequiresEdgeOrSafe  = "CUA_OBSERVE_EXPOSE_REQUIRES_EDGE_AUTH_OR_SAFE"
)

// Exposure is what the operator asked for: the flags of `cua observe`.
type Exposure struct {
	// Addr is the host:port to bind; empty means DefaultAddr. It must be a
	// loopback address in every mode: an exposed observer is reached
	// through an edge that forwards to it, never bound to the world.
	Addr string
	// Expose asks for the pages to be reachable beyond this machine.
	Expose bool
	// PublicURL is the https origin viewers use (https://host[:port], no
	// path, query, fragment or user info).
	PublicURL string
	// EdgeAuth says the operator secures PublicURL at its edge (an access
	// proxy, a tailnet, a reverse proxy with auth they own).
	EdgeAuth bool
	// Safe serves only runs that pass evidence.VerifyDeployment (signed by
	// the deployment key when one is configured).
	Safe bool
}

// Plan is an accepted Exposure: the mode, what to bind and which Host
// headers to answer.
type Plan struct {
	Mode Mode
	Addr string
	// Origin is the public origin (scheme://host[:port]), empty in
	// loopback mode.
	Origin string
	// PublicHosts are the Host header values the public origin arrives
	// with (host, and host:port when the port is explicit or default).
	PublicHosts []string
	// Safe: only share_ready runs are served (always true in
	// ModeShareSafeOpen).
	Safe bool
}

// ExposureError is a refused combination of flags: Code names it, Message
// says which flags to change. The CLI exits 2 with it, before binding.
type ExposureError struct {
	Code    string
	Message string
}

func (e *ExposureError) Error() string { return e.Code + ": " + e.Message }

// IsExposureError reports whether err is or wraps an *ExposureError.
func IsExposureError(err error) bool {
	var e *ExposureError
	return errors.As(err, &e)
}

func refuse(code, format string, args ...any) error {
	return &ExposureError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ValidateExposure applies the fail-closed exposure matrix to x. It checks,
// in order: the address parses (ADDR_INVALID) and is loopback
// (ADDR_NOT_LOOPBACK); a public URL is an https origin (PUBLIC_URL_INVALID)
// and comes with --expose (PUBLIC_URL_REQUIRES_EXPOSE); edge auth names a
// public URL (EDGE_AUTH_REQUIRES_PUBLIC_URL); --expose has an origin, even
// under --safe (EXPOSE_REQUIRES_ORIGIN); and an origin has edge auth or
// --safe (EXPOSE_REQUIRES_EDGE_AUTH_OR_SAFE). It touches no network.
func ValidateExposure(x Exposure) (Plan, error) {
	addr := x.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	if err := checkAddr(addr); err != nil {
		return Plan{}, err
	}
	p := Plan{Mode: ModeLoopback, Addr: addr, Safe: x.Safe}
	if x.PublicURL != "" {
		origin, hosts, err := parseOrigin(x.PublicURL)
		if err != nil {
			return Plan{}, err
		}
		if !x.Expose {
			return Plan{}, refuse(CodePublicURLRequiresExpose, "--public-url is only for --expose; drop it to serve on loopback")
		}
		p.Origin, p.PublicHosts = origin, hosts
	}
	if x.EdgeAuth && x.PublicURL == "" {
		return Plan{}, refuse(CodeEdgeAuthRequiresPublicURL, "--edge-auth says an edge secures --public-url, and no --public-url was given")
	}
	if !x.Expose {
		return p, nil
	}
	if x.PublicURL == "" {
		return Plan{}, refuse(CodeExposeRequiresOrigin, "--expose needs --public-url (the https origin your edge forwards to %s), even with --safe", addr)
	}
	switch {
	case x.EdgeAuth:
		p.Mode = ModeExposed
	case x.Safe:
		p.Mode = ModeShareSafeOpen
	default:
		return Plan{}, refuse(CodeExposeRequiresEdgeOrSafe,
			"--expose --public-url without --edge-auth would publish every run: secure the origin at your edge and pass --edge-auth, or pass --safe to serve only share_ready runs")
	}
	return p, nil
}

func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return refuse(CodeAddrInvalid, "--addr %q: want host:port", addr)
	}
	if !validPort(port) {
		return refuse(CodeAddrInvalid, "--addr %q: bad port", addr)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return refuse(CodeAddrInvalid, "--addr %q: want a loopback IP or localhost", addr)
	}
	if !ip.IsLoopback() {
		return refuse(CodeAddrNotLoopback, "--addr %q is not a loopback address: bind loopback and reach it from outside only through --expose --public-url", addr)
	}
	return nil
}

// parseOrigin accepts https://host[:port] with nothing else and returns the
// normalised origin and the Host header values it arrives with.
func parseOrigin(raw string) (string, []string, error) {
	u, err := url.Parse(raw)
	bad := err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		u.Opaque != "" || (u.Path != "" && u.Path != "/") || strings.ContainsAny(u.Host, " \t")
	if bad {
		return "", nil, refuse(CodePublicURLInvalid, "--public-url: want an https origin, https://host[:port], with no path, query, fragment or user info")
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	origin := "https://" + strings.ToLower(u.Host)
	hosts := []string{}
	switch port {
	case "", "443":
		hosts = append(hosts, host, net.JoinHostPort(host, "443"))
		origin = "https://" + hostLiteral(host)
	default:
		if !validPort(port) || port == "0" {
			return "", nil, refuse(CodePublicURLInvalid, "--public-url: bad port")
		}
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	return origin, hosts, nil
}

func hostLiteral(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535 && strconv.Itoa(n) == port
}
