package replaycmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
)

const (
	examples = "../../../examples/capabilities"
	mousepad = "../../surface/desktop/testdata/capabilities/mousepad.write_note.yaml"
)

// TestReplayFlags checks flag parsing and validation apart from running.
func TestReplayFlags(t *testing.T) {
	t.Parallel()
	capFile := filepath.Join(examples, "memberdesk.savings_balance.yaml")
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, o *replayOptions)
	}{
		{name: "defaults", args: []string{capFile, "-i", "member_id=12345"}, check: func(t *testing.T, o *replayOptions) {
			if o.Run.DataDir != ".cua" || o.Run.BaseURL != "http://127.0.0.1:8811" || o.LibraryDir != examples || o.Run.Inputs["member_id"] != "12345" {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{name: "data dir from env", args: []string{capFile}, env: map[string]string{"CUA_DATA_DIR": "/tmp/x"}, check: func(t *testing.T, o *replayOptions) {
			if o.Run.DataDir != "/tmp/x" {
				t.Errorf("data dir %q", o.Run.DataDir)
			}
		}},
		{name: "value with equals", args: []string{capFile, "-i", "member_id=a=b"}, check: func(t *testing.T, o *replayOptions) {
			if o.Run.Inputs["member_id"] != "a=b" {
				t.Errorf("input %q", o.Run.Inputs["member_id"])
			}
		}},
		{name: "duplicate input", args: []string{capFile, "-i", "member_id=1", "-i", "member_id=2"}, wantErr: "--input member_id given twice"},
		{name: "empty name", args: []string{capFile, "-i", "=1"}, wantErr: "want NAME=VALUE"},
		{name: "approval missing", args: []string{capFile, "--approval", "/nonexistent.json"}, wantErr: "--approval"},
		{name: "gate on a step without gate", args: []string{capFile, "--release-gate", "search"}, wantErr: "no gated step"},
		// --evidence-level none is checked against the capability before a
		// browser starts: the transfer is not read-only.
		{name: "evidence none on the transfer", args: []string{filepath.Join(examples, "memberdesk.transfer_funds.yaml"), "--evidence-level", "none"},
			wantErr: "--evidence-level none: memberdesk.transfer_funds@1.3.0 is not read-only"},
		{name: "evidence none on the lookup", args: []string{capFile, "--evidence-level", "none"}, check: func(t *testing.T, o *replayOptions) {
			if o.Run.EvidenceLevel != "none" {
				t.Errorf("evidence level %q", o.Run.EvidenceLevel)
			}
		}},
		{name: "evidence level unknown", args: []string{capFile, "--evidence-level", "most"}, wantErr: "want none, decisive or full"},
		{name: "park with its console", args: []string{capFile, "--park", "--park-timeout", "90s", "--console", "127.0.0.1:0"}, check: func(t *testing.T, o *replayOptions) {
			if !o.Park || o.Run.ParkTimeout != 90*time.Second || o.ParkConsole.Addr != "127.0.0.1:0" {
				t.Errorf("park flags: %+v %s %+v", o.Park, o.Run.ParkTimeout, o.ParkConsole)
			}
		}},
		{name: "park timeout not positive", args: []string{capFile, "--park", "--park-timeout", "0s"}, wantErr: "--park-timeout"},
		{name: "park console on a remote address", args: []string{capFile, "--park", "--console", "0.0.0.0:8812"}, wantErr: "not a loopback"},
		{name: "display on a web capability", args: []string{capFile, "--display", ":1"}, wantErr: `--display: the capability's surface is "web"`},
		{name: "launch on a web capability", args: []string{capFile, "--launch", "mousepad"}, wantErr: `--launch: the capability's surface is "web"`},
		{name: "desktop launch command", args: []string{mousepad, "--launch", "mousepad --disable-server {url}"}, check: func(t *testing.T, o *replayOptions) {
			if got := strings.Join(o.Launch.Desktop.Command, "|"); got != "mousepad|--disable-server|{url}" || o.Launch.Desktop.Display != "" {
				t.Errorf("desktop: %+v", o.Launch.Desktop)
			}
		}},
		{name: "desktop display takes the session bus", args: []string{mousepad, "--display", ":7"}, env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/bus"}, check: func(t *testing.T, o *replayOptions) {
			if d := o.Launch.Desktop; d.Display != ":7" || d.SessionBus != "unix:path=/tmp/bus" {
				t.Errorf("desktop: %+v", d)
			}
		}},
		{name: "desktop display without a bus", args: []string{mousepad, "--display", ":7"}, wantErr: "DBUS_SESSION_BUS_ADDRESS is unset"},
		{name: "desktop display not X", args: []string{mousepad, "--display", "wayland-0"}, env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/bus"}, wantErr: `--display "wayland-0"`},
		{name: "park console certificate missing", args: []string{capFile, "--park", "--tls-cert", "/nonexistent", "--tls-key", "/nonexistent"}, wantErr: "--tls-cert"},
		{name: "park console remote without TLS", args: []string{capFile, "--park", "--console", "0.0.0.0:8812", "--allow-remote"}, wantErr: "--tls-cert and --tls-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, out, errOut := cmdutil.TestFactory(tt.env)
			var got *replayOptions
			cmd := NewCmdReplay(f, func(_ context.Context, o *replayOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(out)
			cmd.SetErr(errOut)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Error("the command ran despite a bad flag")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}
