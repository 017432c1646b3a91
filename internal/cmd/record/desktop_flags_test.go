package recordcmd

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
)

// TestRecordSurfaceFlags: --surface, --launch and --display bind into the
// session's launch options, and each bad combination is refused naming
// the flag before anything opens.
func TestRecordSurfaceFlags(t *testing.T) {
	dir := t.TempDir()
	good := []string{"--target", "http://fixture", "--goal", "Greet Ada", "--out", filepath.Join(dir, "caps"), "--data-dir", dir}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{append(good, "--surface", "state"), nil, `--surface "state"`},
		{append(good, "--surface", "desktop"), nil, "--surface desktop needs --launch"},
		{append(good, "--launch", "mousepad"), nil, "--launch: only --surface desktop"},
		{append(good, "--display", ":1"), nil, "--display: only --surface desktop"},
		{append(good, "--surface", "desktop", "--display", "1"), nil, `--display "1"`},
		{append(good, "--surface", "desktop", "--display", ":1"), nil, "DBUS_SESSION_BUS_ADDRESS is unset"},
	} {
		f, _, _ := cmdutil.TestFactory(c.env)
		cmd := NewCmdRecord(f, func(context.Context, *recordOptions) error { t.Errorf("%v: ran", c.args); return nil })
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs(c.args)
		if err := cmd.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
	f, _, _ := cmdutil.TestFactory(map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/bus"})
	var got *recordOptions
	cmd := NewCmdRecord(f, func(_ context.Context, o *recordOptions) error { got = o; return nil })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(append(good, "--surface", "desktop", "--launch", "python3 fixture.py {url}", "--display", ":7"))
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := got.Launch.Desktop
	if got.Where.kind() != domain.SurfaceDesktop || !slices.Equal(d.Command, []string{"python3", "fixture.py", "{url}"}) ||
		d.Display != ":7" || d.SessionBus != "unix:path=/tmp/bus" {
		t.Errorf("bound %q %+v", got.Where.kind(), d)
	}
}
