package discovercmd

import (
	"strings"

	"github.com/cuahq/cua/internal/cmdutil"
)

// validateDesktop checks --launch and --display, which only the desktop
// surface takes. The desktop surface names its application by --target's
// host (http://EXECUTABLE, the desktop allowlist's name for it); --launch
// starts it in a private Xvfb and AT-SPI session unless --display names
// the caller's own, whose session bus is DBUS_SESSION_BUS_ADDRESS.
func (o *discoverOptions) validateDesktop() error {
	d := &o.Launch.Desktop
	if o.Surface != "desktop" {
		switch {
		case o.LaunchCommand != "":
			return cmdutil.FlagErrorf("--launch: only --surface desktop launches an application (surface is %q)", o.Surface)
		case d.Display != "":
			return cmdutil.FlagErrorf("--display: only --surface desktop acts on an X display (surface is %q)", o.Surface)
		}
		return nil
	}
	d.Command = strings.Fields(o.LaunchCommand)
	if len(d.Command) == 0 && d.Display == "" {
		return cmdutil.FlagErrorf("--surface desktop needs --launch CMD (or --display to attach to a running application)")
	}
	if d.Display != "" {
		if !strings.HasPrefix(d.Display, ":") {
			return cmdutil.FlagErrorf("--display %q: want an X display such as :1", d.Display)
		}
		if d.SessionBus = o.Env("DBUS_SESSION_BUS_ADDRESS"); d.SessionBus == "" {
			return cmdutil.FlagErrorf("--display %s: DBUS_SESSION_BUS_ADDRESS is unset (the display's session bus, where its applications register with AT-SPI)", d.Display)
		}
	}
	return nil
}
