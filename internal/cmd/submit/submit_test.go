package submitcmd_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	submitcmd "github.com/cuahq/cua/internal/cmd/submit"
	"github.com/cuahq/cua/internal/cmdutil"
)

// The flags become the run's arguments, and a bad --input-secret is a
// flag error naming the input before anything opens. (The refusal of a
// sensitive value, which needs the catalog, is tested on the real binary
// in internal/cmd/batch.)
func TestNewCmdSubmit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		refs map[string]string
		err  string
	}{
		{name: "a reference", args: []string{"-i", "member_id=12345", "--input-secret", "pin=member_pin"},
			refs: map[string]string{"pin": "member_pin"}},
		{name: "not NAME=REF", args: []string{"--input-secret", "pin"}, err: "--input-secret"},
		{name: "not a reference", args: []string{"--input-secret", "pin=4321 0000"}, err: "input_secrets.pin: not a secret reference"},
		{name: "both a value and a reference", args: []string{"-i", "pin=4321", "--input-secret", "pin=member_pin"},
			err: "input_secrets.pin: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := cmdutil.TestFactory(map[string]string{"CUA_DATA_DIR": t.TempDir()})
			var got *submitcmd.SubmitOptions
			cmd := submitcmd.NewCmdSubmit(f, func(_ context.Context, o *submitcmd.SubmitOptions) error { got = o; return nil })
			cmd.SetArgs(append([]string{"test.sign_on_as@1.0.0"}, tt.args...))
			cmd.SetOut(&strings.Builder{})
			cmd.SetErr(&strings.Builder{})
			err := cmd.ExecuteContext(context.Background())
			if tt.err != "" {
				var fe *cmdutil.FlagError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "4321") {
					t.Fatalf("err %v, want a flag error with %q and no value", err, tt.err)
				}
				return
			}
			if err != nil || got == nil || !maps.Equal(got.Args.InputSecrets, tt.refs) || got.Args.Inputs["member_id"] != "12345" {
				t.Fatalf("err %v, args %+v", err, got)
			}
		})
	}
}
