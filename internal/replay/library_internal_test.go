package replay

import "testing"

func TestSemverLess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"1.0.0", "1.0.1", true},
		{"1.2.0", "1.10.0", true},
		{"1.0.0-rc.1", "1.0.0", true},
		{"1.0.0", "1.0.0-rc.1", false},
		{"1.0.0-rc.2", "1.0.0-rc.10", true},
		{"1.0.0-alpha", "1.0.0-beta", true},
		{"1.0.0-rc.1", "1.0.0-rc.1.1", true},
		{"1.0.0+build.5", "1.0.0", false},
		{"2.0.0", "1.9.9", false},
	}
	for _, tt := range tests {
		if got := semverLess(tt.a, tt.b); got != tt.want {
			t.Errorf("semverLess(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
