package launch

import (
	"slices"
	"testing"
)

func TestStateOrigins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base string
		allowed    []string
		want       []string
	}{
		{name: "none: the base origin only", base: "http://127.0.0.1:8811", want: nil},
		{name: "bare host takes the base port", base: "http://127.0.0.1:8811", allowed: []string{"localhost"}, want: []string{"http://localhost:8811"}},
		{name: "origin entry kept", base: "http://127.0.0.1:8811", allowed: []string{"https://api.example:9443"}, want: []string{"https://api.example:9443"}},
		{name: "default https port", base: "https://app.example", allowed: []string{"app.example"}, want: []string{"https://app.example:443"}},
		{name: "default http port", base: "http://app.example", allowed: []string{"app.example"}, want: []string{"http://app.example:80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := StateOrigins(tt.base, tt.allowed); !slices.Equal(got, tt.want) {
				t.Errorf("StateOrigins(%q, %q) = %q, want %q", tt.base, tt.allowed, got, tt.want)
			}
		})
	}
}
