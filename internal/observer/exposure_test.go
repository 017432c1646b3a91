package observer_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/cuahq/cua/internal/observer"
)

// TestValidateExposure is the exposure matrix, one row per combination:
// what is accepted (and in which mode) and what is refused (and with which
// code).
func TestValidateExposure(t *testing.T) {
	t.Parallel()
	const pub = "https://runs.example.test"
	tests := []struct {
		name     string
		x        observer.Exposure
		mode     observer.Mode
		safe     bool
		code     string
		pubHosts []string
	}{
		{name: "default is loopback", x: observer.Exposure{}, mode: observer.ModeLoopback},
		{name: "loopback with --safe", x: observer.Exposure{Safe: true}, mode: observer.ModeLoopback, safe: true},
		{name: "loopback on localhost", x: observer.Exposure{Addr: "localhost:8813"}, mode: observer.ModeLoopback},
		{name: "loopback on ::1", x: observer.Exposure{Addr: "[::1]:0"}, mode: observer.ModeLoopback},
		{name: "expose + public-url + edge-auth is exposed", x: observer.Exposure{Expose: true, PublicURL: pub, EdgeAuth: true},
			mode: observer.ModeExposed, pubHosts: []string{"runs.example.test", "runs.example.test:443"}},
		{name: "expose + public-url + edge-auth + safe is exposed, safe", x: observer.Exposure{Expose: true, PublicURL: pub, EdgeAuth: true, Safe: true},
			mode: observer.ModeExposed, safe: true},
		{name: "expose + public-url + safe is share-safe-open", x: observer.Exposure{Expose: true, PublicURL: pub, Safe: true},
			mode: observer.ModeShareSafeOpen, safe: true},
		{name: "public-url with explicit port", x: observer.Exposure{Expose: true, PublicURL: "https://Runs.Example.Test:8443/", EdgeAuth: true},
			mode: observer.ModeExposed, pubHosts: []string{"runs.example.test:8443"}},
		{name: "expose + public-url alone is refused", x: observer.Exposure{Expose: true, PublicURL: pub}, code: observer.CodeExposeRequiresEdgeOrSafe},
		{name: "expose without origin is refused", x: observer.Exposure{Expose: true}, code: observer.CodeExposeRequiresOrigin},
		{name: "expose + safe without origin is refused", x: observer.Exposure{Expose: true, Safe: true}, code: observer.CodeExposeRequiresOrigin},
		{name: "expose + edge-auth without origin is refused", x: observer.Exposure{Expose: true, EdgeAuth: true}, code: observer.CodeEdgeAuthRequiresPublicURL},
		{name: "edge-auth alone is refused", x: observer.Exposure{EdgeAuth: true}, code: observer.CodeEdgeAuthRequiresPublicURL},
		{name: "public-url without expose is refused", x: observer.Exposure{PublicURL: pub}, code: observer.CodePublicURLRequiresExpose},
		{name: "public-url + edge-auth without expose is refused", x: observer.Exposure{PublicURL: pub, EdgeAuth: true}, code: observer.CodePublicURLRequiresExpose},
		{name: "public-url + safe without expose is refused", x: observer.Exposure{PublicURL: pub, Safe: true}, code: observer.CodePublicURLRequiresExpose},
		{name: "http public-url is refused", x: observer.Exposure{Expose: true, PublicURL: "http://runs.example.test", EdgeAuth: true}, code: observer.CodePublicURLInvalid},
		{name: "public-url with a path is refused", x: observer.Exposure{Expose: true, PublicURL: pub + "/runs", EdgeAuth: true}, code: observer.CodePublicURLInvalid},
		{name: "public-url with user info is refused", x: observer.Exposure{Expose: true, PublicURL: "https://u:p@runs.example.test", EdgeAuth: true}, code: observer.CodePublicURLInvalid},
		{name: "public-url with a query is refused", x: observer.Exposure{Expose: true, PublicURL: pub + "?a=1", EdgeAuth: true}, code: observer.CodePublicURLInvalid},
		{name: "public-url not a URL is refused", x: observer.Exposure{Expose: true, PublicURL: "runs.example.test", EdgeAuth: true}, code: observer.CodePublicURLInvalid},
		{name: "wildcard bind is refused", x: observer.Exposure{Addr: "0.0.0.0:8813"}, code: observer.CodeAddrNotLoopback},
		{name: "wildcard bind is refused even exposed", x: observer.Exposure{Addr: "0.0.0.0:8813", Expose: true, PublicURL: pub, EdgeAuth: true}, code: observer.CodeAddrNotLoopback},
		{name: "a LAN address is refused", x: observer.Exposure{Addr: "192.168.1.5:8813"}, code: observer.CodeAddrNotLoopback},
		{name: "an empty host is refused", x: observer.Exposure{Addr: ":8813"}, code: observer.CodeAddrInvalid},
		{name: "a host name is refused", x: observer.Exposure{Addr: "example.test:8813"}, code: observer.CodeAddrInvalid},
		{name: "no port is refused", x: observer.Exposure{Addr: "127.0.0.1"}, code: observer.CodeAddrInvalid},
		{name: "a bad port is refused", x: observer.Exposure{Addr: "127.0.0.1:99999"}, code: observer.CodeAddrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan, err := observer.ValidateExposure(tt.x)
			if tt.code != "" {
				var xe *observer.ExposureError
				if !errors.As(err, &xe) || xe.Code != tt.code {
					t.Fatalf("err = %v, want code %s", err, tt.code)
				}
				if !observer.IsExposureError(err) || xe.Message == "" {
					t.Fatalf("refusal %v has no message or is not an exposure error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if plan.Mode != tt.mode || plan.Safe != tt.safe {
				t.Fatalf("plan = %+v, want mode %s safe %v", plan, tt.mode, tt.safe)
			}
			if tt.pubHosts != nil && !slices.Equal(plan.PublicHosts, tt.pubHosts) {
				t.Fatalf("public hosts = %v, want %v", plan.PublicHosts, tt.pubHosts)
			}
			if tt.mode == observer.ModeLoopback && (plan.Origin != "" || len(plan.PublicHosts) != 0) {
				t.Fatalf("loopback plan has a public origin: %+v", plan)
			}
		})
	}
}
