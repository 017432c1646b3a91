package recordcmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
)

// surfaceOptions are --surface, --launch and --display: where the
// application runs. The desktop surface names its application by
// --target's host (http://EXECUTABLE) and its live picture is the X
// screen's picture of the application's windows.
type surfaceOptions struct {
	Surface, LaunchCommand string
}

// flags registers --surface, --launch and --display on cmd; --display
// binds into lo.
func (s *surfaceOptions) flags(cmd *cobra.Command, lo *launch.Options) {
	fl := cmd.Flags()
	fl.StringVar(&s.Surface, "surface", "web", "web (Chromium) or desktop (AT-SPI, with --launch)")
	fl.StringVar(&s.LaunchCommand, "launch", "", `desktop: the command that starts the application, "{url}" replaced by the document`)
	fl.StringVar(&lo.Desktop.Display, "display", "", "desktop: the X display to act on (default: a private Xvfb and session bus)")
}

// kind is the surface the flags name.
func (s *surfaceOptions) kind() domain.Surface { return domain.Surface(s.Surface) }

// validate checks the surface flags and binds --launch into lo; env reads
// DBUS_SESSION_BUS_ADDRESS for --display.
func (s *surfaceOptions) validate(lo *launch.Options, env func(string) string) error {
	d := &lo.Desktop
	switch s.Surface {
	case "web":
		switch {
		case s.LaunchCommand != "":
			return cmdutil.FlagErrorf("--launch: only --surface desktop launches an application")
		case d.Display != "":
			return cmdutil.FlagErrorf("--display: only --surface desktop acts on an X display")
		}
		return nil
	case "desktop":
	default:
		return cmdutil.FlagErrorf("--surface %q: want web or desktop", s.Surface)
	}
	d.Command = strings.Fields(s.LaunchCommand)
	if len(d.Command) == 0 && d.Display == "" {
		return cmdutil.FlagErrorf("--surface desktop needs --launch CMD (or --display to attach to a running application)")
	}
	if d.Display != "" {
		if !strings.HasPrefix(d.Display, ":") {
			return cmdutil.FlagErrorf("--display %q: want an X display such as :1", d.Display)
		}
		if d.SessionBus = env("DBUS_SESSION_BUS_ADDRESS"); d.SessionBus == "" {
			return cmdutil.FlagErrorf("--display %s: DBUS_SESSION_BUS_ADDRESS is unset (the display's session bus, where its applications register with AT-SPI)", d.Display)
		}
	}
	return nil
}
