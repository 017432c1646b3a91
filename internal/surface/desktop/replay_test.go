package desktop_test

import (
	"context"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/replay"
)

// replayOn replays a capability file through launch's desktop case on the
// shared session, the way `cua replay --launch CMD --display :N` does.
func replayOn(t *testing.T, file, baseURL string, command []string, inputs map[string]string) *domain.RunRecord {
	t.Helper()
	e := session(t)
	loaded, err := capability.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
	defer cancel()
	l := launch.New(launch.Options{
		Kind: loaded.Capability.Surface, BaseURL: baseURL, AllowedDomains: loaded.Capability.Policy.AllowedDomains,
		Desktop: launch.DesktopOptions{Display: e.Display, SessionBus: e.SessionBus, Command: command},
	})
	defer l.Close()
	s, err := l.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := replay.Run(ctx, replay.Options{Capability: loaded, Inputs: inputs, BaseURL: baseURL, Surface: s, RunID: "desktop-" + t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestReplayFixtureCapability replays a hand-written capability on the GTK
// fixture green, and fails closed when the button it clicks was renamed.
func TestReplayFixtureCapability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		extra    []string
		status   domain.RunStatus
		code     domain.FailureCode
		greeting string
	}{
		{name: "green", status: domain.StatusSuccess, greeting: "Hello, Ada (Blue)"},
		{name: "renamed button fails closed", extra: []string{"--rename", "Greet=Salute"}, status: domain.StatusFailed, code: domain.CodeTargetNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := replayOn(t, "testdata/capabilities/fixture.greet.yaml", "http://fixture", fixtureCommand(t, tt.extra...), map[string]string{"who": "Ada"})
			if rec.Status != tt.status || rec.FailureCode != tt.code {
				t.Fatalf("status %s (%s), want %s (%s): %s", rec.Status, rec.FailureCode, tt.status, tt.code, rec.Message)
			}
			if tt.greeting != "" && rec.Outputs["greeting"] != tt.greeting {
				t.Errorf("greeting = %v, want %q", rec.Outputs["greeting"], tt.greeting)
			}
		})
	}
}

// TestReplayMousepad replays a hand-written capability on a real Debian
// desktop program, Mousepad (GTK 3), launched fresh in the session.
func TestReplayMousepad(t *testing.T) {
	t.Parallel()
	rec := replayOn(t, "testdata/capabilities/mousepad.write_note.yaml", "http://mousepad", []string{"mousepad", "--disable-server"}, map[string]string{"note": "Call the member back at 3pm"})
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("status %s (%s): %s", rec.Status, rec.FailureCode, rec.Message)
	}
	if got := rec.Outputs["text"]; got != "Call the member back at 3pm" {
		t.Errorf("text = %v, want the note", got)
	}
}
