package mcpcmd

import (
	"context"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

// TestMCPFlags checks flag parsing and validation apart from serving.
func TestMCPFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, o *mcpOptions)
	}{
		{name: "defaults: stdio", check: func(t *testing.T, o *mcpOptions) {
			if o.HTTP != "" || o.MaxSessions != 4 || o.BaseURL != "http://127.0.0.1:8811" || o.DataDir != ".cua" || o.Store.DataDir != ".cua" {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{name: "http on loopback", args: []string{"--http", "127.0.0.1:8813", "--max-sessions", "2"}, check: func(t *testing.T, o *mcpOptions) {
			if o.HTTP != "127.0.0.1:8813" || o.MaxSessions != 2 {
				t.Errorf("%+v", o)
			}
		}},
		{name: "http on localhost and ::1", args: []string{"--http", "[::1]:0"}},
		{name: "data dir from env", env: map[string]string{"CUA_DATA_DIR": "/tmp/x"}, check: func(t *testing.T, o *mcpOptions) {
			if o.DataDir != "/tmp/x" {
				t.Errorf("data dir %q", o.DataDir)
			}
		}},
		{name: "http on every interface", args: []string{"--http", "0.0.0.0:8813"}, wantErr: "--http"},
		{name: "http without port", args: []string{"--http", "127.0.0.1"}, wantErr: "--http"},
		{name: "http on a public host", args: []string{"--http", "example.com:80"}, wantErr: "not a loopback address"},
		{name: "no sessions", args: []string{"--max-sessions", "0"}, wantErr: "--max-sessions 0"},
		{name: "bad base url", args: []string{"--base-url", "ftp://x"}, wantErr: "--base-url"},
		{name: "bad console url", args: []string{"--console-url", "nope"}, wantErr: "--console-url"},
		{name: "no args", args: []string{"extra"}, wantErr: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, out, errOut := cmdutil.TestFactory(tt.env)
			var got *mcpOptions
			cmd := NewCmdMCP(f, func(_ context.Context, o *mcpOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(out)
			cmd.SetErr(errOut)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || got != nil {
					t.Fatalf("err %v, want %q before serving", err, tt.wantErr)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err %v", err)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}
