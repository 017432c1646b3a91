package discovercmd

import (
	"context"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

// TestDiscoverFlags checks that discover's flags bind into the run they
// configure and that every bad one is refused, naming the flag, before
// anything runs (no model, no browser).
func TestDiscoverFlags(t *testing.T) {
	t.Parallel()
	base := []string{"--goal", "look up a member", "--target", "http://127.0.0.1:8811", "--out", "caps"}
	cassette := []string{"--cassette", "../../../examples/cassettes/savings_balance.json"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *discoverOptions)
	}{
		{name: "binds into the run", args: append(append([]string{"--max-steps", "7", "--grant", "Submit transfer:2", "--id", "x.y"}, base...), cassette...),
			check: func(t *testing.T, o *discoverOptions) {
				a := o.Agent
				if a.Goal != "look up a member" || a.BaseURL != "http://127.0.0.1:8811" || o.Params.Out != "caps" || o.Params.ID != "x.y" ||
					a.Budget.MaxSteps != 7 || len(a.Grants) != 1 || a.Grants[0].Match != "Submit transfer" || a.Grants[0].Uses != 2 || a.DataDir != ".cua" {
					t.Errorf("bound options: %+v", o)
				}
			}},
		{name: "no goal", args: []string{"--target", "http://127.0.0.1:8811", "--out", "caps"}, wantErr: "--goal is required"},
		{name: "target not http", args: append([]string{"--goal", "g", "--out", "o", "--target", "file:///etc"}, cassette...), wantErr: `--target "file:///etc"`},
		{name: "bad grant", args: append(append([]string{"--grant", "Submit"}, base...), cassette...), wantErr: "--grant"},
		{name: "record and cassette", args: append(append([]string{"--record", "r.json"}, base...), cassette...), wantErr: "--record and --cassette"},
		{name: "autonomy", args: append(append([]string{"--autonomy", "9"}, base...), cassette...), wantErr: "--autonomy 9"},
		{name: "sovereign without budget", args: append(append([]string{"--sovereign", "--deadline", "0"}, base...), cassette...), wantErr: "--sovereign needs"},
		{name: "surface", args: append(append([]string{"--surface", "desktop2"}, base...), cassette...), wantErr: `--surface "desktop2"`},
		{name: "desktop needs launch", args: append(append([]string{"--surface", "desktop"}, base...), cassette...), wantErr: "--surface desktop needs --launch"},
		{name: "launch needs desktop", args: append(append([]string{"--launch", "mousepad"}, base...), cassette...), wantErr: "--launch: only --surface desktop"},
		{name: "display form", args: append(append([]string{"--surface", "desktop", "--display", "1"}, base...), cassette...), wantErr: `--display "1"`},
		{name: "model", args: append([]string{"--model", "nope:x"}, base...), wantErr: "--model"},
		{name: "missing key names it", args: append([]string{"--model", "openai"}, base...), wantErr: "OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, out, errOut := cmdutil.TestFactory(nil)
			var got *discoverOptions
			cmd := NewCmdDiscover(f, func(_ context.Context, o *discoverOptions) error { got = o; return nil })
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
