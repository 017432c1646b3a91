package policy_test

import (
	"testing"

	"github.com/cuahq/cua/internal/policy"
)

// TestOriginAllowed: a run's base URL picks only among full origins;
// scheme, host and port must match, default ports normalised, the path
// ignored, user info refused, bare hosts never admit an origin.
func TestOriginAllowed(t *testing.T) {
	app := []string{"http://127.0.0.1:8811"}
	tests := []struct {
		name    string
		allowed []string
		base    string
		origin  string // want; "" with wantErr
		ok      bool
		wantErr bool
	}{
		{"same origin", app, "http://127.0.0.1:8811", "http://127.0.0.1:8811", true, false},
		{"trailing slash", app, "http://127.0.0.1:8811/", "http://127.0.0.1:8811", true, false},
		{"path, query and fragment ignored", app, "http://127.0.0.1:8811/members/search?q=1#top", "http://127.0.0.1:8811", true, false},
		{"scheme and host case", app, "HTTP://127.0.0.1:8811", "http://127.0.0.1:8811", true, false},
		{"leading zero port", app, "http://127.0.0.1:08811", "http://127.0.0.1:8811", true, false},
		{"allowed entry with trailing slash", []string{"http://127.0.0.1:8811/"}, "http://127.0.0.1:8811", "http://127.0.0.1:8811", true, false},
		{"another loopback port", app, "http://127.0.0.1:8812", "http://127.0.0.1:8812", false, false},
		{"https against http", app, "https://127.0.0.1:8811", "https://127.0.0.1:8811", false, false},
		{"localhost is another host", app, "http://localhost:8811", "http://localhost:8811", false, false},
		{"default port https", []string{"https://bank.example"}, "https://bank.example:443/login", "https://bank.example:443", true, false},
		{"explicit default port allowed", []string{"http://bank.example:80"}, "http://bank.example", "http://bank.example:80", true, false},
		{"default https port is not http's", []string{"https://bank.example"}, "http://bank.example", "http://bank.example:80", false, false},
		{"another https port", []string{"https://bank.example"}, "https://bank.example:8443", "https://bank.example:8443", false, false},
		{"IPv6 loopback", []string{"http://[::1]:8811"}, "http://[::1]:8811/", "http://[::1]:8811", true, false},
		{"IPv6 loopback written long", []string{"http://[::1]:8811"}, "http://[0:0:0:0:0:0:0:1]:8811", "http://[::1]:8811", true, false},
		{"IPv6 loopback other port", []string{"http://[::1]:8811"}, "http://[::1]:8812", "http://[::1]:8812", false, false},
		{"IPv6 is not IPv4 loopback", []string{"http://[::1]:8811"}, "http://127.0.0.1:8811", "http://127.0.0.1:8811", false, false},
		{"bare hosts admit no origin", []string{"127.0.0.1", "localhost"}, "http://127.0.0.1:8811", "http://127.0.0.1:8811", false, false},
		{"wildcard origin", []string{"https://*.bank.example"}, "https://eu.bank.example", "https://eu.bank.example:443", true, false},
		{"wildcard is no suffix match", []string{"https://*.bank.example"}, "https://bank.example.evil", "https://bank.example.evil:443", false, false},
		{"a bad entry allows nothing", []string{"http://user@127.0.0.1:8811", "http://127.0.0.1:8811/path"}, "http://127.0.0.1:8811", "http://127.0.0.1:8811", false, false},
		{"no lists", nil, "http://127.0.0.1:8811", "http://127.0.0.1:8811", false, false},
		{"userinfo", app, "http://user:pw@127.0.0.1:8811", "", false, true},
		{"userinfo that looks like the host", app, "http://127.0.0.1:8811@127.0.0.1:8812", "", false, true},
		{"backslash", app, `http://127.0.0.1:8811\@127.0.0.1:8812`, "", false, true},
		{"white space", app, "http://127.0.0.1:8811 /", "", false, true},
		{"percent in host", app, "http://127.0.0.%31:8811", "", false, true},
		{"not http", app, "ftp://127.0.0.1:8811", "", false, true},
		{"relative", app, "/login", "", false, true},
		{"no host", app, "http:///login", "", false, true},
		{"port out of range", app, "http://127.0.0.1:88110", "", false, true},
		{"empty", app, "", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origin, ok, err := policy.OriginAllowed(tt.base, tt.allowed)
			if (err != nil) != tt.wantErr || ok != tt.ok || origin != tt.origin {
				t.Errorf("OriginAllowed(%q, %q) = %q, %v, %v; want %q, %v, error %v", tt.base, tt.allowed, origin, ok, err, tt.origin, tt.ok, tt.wantErr)
			}
		})
	}
	// A capability's list and a worker's: either may admit the origin.
	if _, ok, err := policy.OriginAllowed("http://127.0.0.1:8811", []string{"127.0.0.1"}, app); !ok || err != nil {
		t.Errorf("the second list's origin was not allowed: %v", err)
	}
}

// TestAllowOrigin: an operator's --allow-origin is one full origin.
func TestAllowOrigin(t *testing.T) {
	good := map[string]string{
		"http://127.0.0.1:8811":  "http://127.0.0.1:8811",
		"http://127.0.0.1:8811/": "http://127.0.0.1:8811",
		"https://Bank.Example":   "https://bank.example:443",
		"http://bank.example":    "http://bank.example:80",
		"http://[::1]:8811":      "http://[::1]:8811",
		"http://localhost:80/":   "http://localhost:80",
	}
	for in, want := range good {
		if got, err := policy.AllowOrigin(in); err != nil || got != want {
			t.Errorf("AllowOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "127.0.0.1:8811", "127.0.0.1", "http://user@127.0.0.1:8811", "http://127.0.0.1:8811/login",
		"http://127.0.0.1:8811?x=1", "http://127.0.0.1:8811#x", "https://*.bank.example", "ftp://127.0.0.1", "http://127.0.0.1:0",
		"http://127.0.0.1:70000", "http://"} {
		if got, err := policy.AllowOrigin(in); err == nil {
			t.Errorf("AllowOrigin(%q) = %q, want an error", in, got)
		}
	}
}

// TestBaseOrigin: the origin named in a refusal.
func TestBaseOrigin(t *testing.T) {
	if got, err := policy.BaseOrigin("http://127.0.0.1:40123/login?next=/"); err != nil || got != "http://127.0.0.1:40123" {
		t.Errorf("BaseOrigin = %q, %v", got, err)
	}
	if got, err := policy.BaseOrigin("http://u@127.0.0.1:40123"); err == nil {
		t.Errorf("BaseOrigin with user info = %q, want an error", got)
	}
}
