package desktop

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// TestEnvCloseLeavesNothing starts a session of its own, lets the AT-SPI
// bus start in it, and checks that Close ends every process group it
// started (Xvfb, the session bus, and what the bus activated) and removes
// its directory.
func TestEnvCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
	defer cancel()
	e, err := StartEnv(ctx, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dialA11y(ctx, e.SessionBus) // activates at-spi-bus-launcher
	if err != nil {
		_ = e.Close()
		t.Fatal(err)
	}
	if _, err := b.apps(ctx); err != nil { // activates at-spi2-registryd
		t.Error(err)
	}
	_ = b.close()
	var groups []int
	for _, c := range e.groups {
		groups = append(groups, c.Process.Pid)
	}
	dir := e.dir
	if len(groups) != 2 {
		t.Fatalf("session runs %d process groups, want 2 (Xvfb, dbus-daemon)", len(groups))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, pgid := range groups {
		if groupAlive(pgid) {
			t.Errorf("process group %d still has running processes after Close", pgid)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("session directory %s left behind: %v", dir, err)
	}
}

func TestRoleTableIsCanonical(t *testing.T) {
	t.Parallel()
	for atspi := range atspiRoles {
		if got := Role(atspi); !isCanonical(got) {
			t.Errorf("Role(%q) = %q, not canonical", atspi, got)
		}
	}
	tests := []struct{ atspi, want string }{
		{"push button", "button"},
		{"text", "textbox"}, // an entry; canonical "text" is static text
		{"label", "text"},
		{"statusbar", "status"}, // ATK's spelling
		{"frame", "document"},
		{"alert", "alertdialog"},
		{"no such role", "generic"},
	}
	for _, tt := range tests {
		if got := Role(tt.atspi); got != tt.want {
			t.Errorf("Role(%q) = %q, want %q", tt.atspi, got, tt.want)
		}
	}
}

func isCanonical(role string) bool { return domain.IsRole(role) }
