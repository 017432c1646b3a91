package consolecmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
)

// TestConsoleFlags checks flag parsing and validation apart from serving.
func TestConsoleFlags(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("a-token-of-enough-length\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *consoleOptions)
	}{
		{name: "defaults", check: func(t *testing.T, o *consoleOptions) {
			if o.Park.Addr != "127.0.0.1:8812" || o.Park.AllowRemote || o.Store.DataDir != ".cua" {
				t.Errorf("defaults: %+v %+v", o.Park, o.Store)
			}
		}},
		{name: "token file", args: []string{"--token-file", tokenFile}, check: func(t *testing.T, o *consoleOptions) {
			if o.Park.TokenFile != tokenFile {
				t.Errorf("token file %q", o.Park.TokenFile)
			}
		}},
		{name: "remote with allow-remote", args: []string{"--addr", "0.0.0.0:8812", "--allow-remote"}},
		{name: "remote without allow-remote", args: []string{"--addr", "0.0.0.0:8812"}, wantErr: "not a loopback"},
		{name: "address without port", args: []string{"--addr", "127.0.0.1"}, wantErr: "addr"},
		{name: "short token", args: []string{"--token-file", short}, wantErr: "16 characters"},
		{name: "an argument", args: []string{"extra"}, wantErr: "no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := cmdutil.TestFactory(nil)
			var got *consoleOptions
			cmd := NewCmdConsole(f, func(_ context.Context, o *consoleOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || got != nil {
					t.Fatalf("err %v (ran: %v), want %q", err, got != nil, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// TestConsoleServes starts the real command on a SQLite store and checks
// it prints its address and token and serves the sign-in page.
func TestConsoleServes(t *testing.T) {
	t.Parallel()
	f, _, errOut := cmdutil.TestFactory(nil)
	o := &consoleOptions{IO: f.IO, Park: ParkFlags{Addr: "127.0.0.1:0"}, serveFor: 300 * time.Millisecond}
	o.Store.DataDir, o.Store.Getenv = t.TempDir(), func(string) string { return "" }
	if err := runConsole(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if out := errOut.String(); !strings.Contains(out, "console: http://127.0.0.1:") || !strings.Contains(out, "sign-in token ") {
		t.Fatalf("stderr = %q, want the URL and the token", out)
	}
}
