package desktop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"
)

// AT-SPI's D-Bus names.
const (
	ifAccessible   = "org.a11y.atspi.Accessible"
	ifAction       = "org.a11y.atspi.Action"
	ifComponent    = "org.a11y.atspi.Component"
	ifText         = "org.a11y.atspi.Text"
	ifEditableText = "org.a11y.atspi.EditableText"
	ifSelection    = "org.a11y.atspi.Selection"
	ifValue        = "org.a11y.atspi.Value"
	registryName   = "org.a11y.atspi.Registry"
	rootPath       = dbus.ObjectPath("/org/a11y/atspi/accessible/root")
	coordScreen    = uint32(0)
)

// AT-SPI state bits (AtspiStateType), as GetState's two 32-bit words.
const (
	stActive    = 1
	stChecked   = 4
	stEditable  = 7
	stEnabled   = 8
	stExpanded  = 10
	stFocusable = 11
	stFocused   = 12
	stModal     = 16
	stPressed   = 20
	stSelected  = 23
	stSensitive = 24
	stShowing   = 25
	stVisible   = 30
)

// ref names one accessible object: the application's bus name and the
// object's path.
type ref struct {
	Bus  string
	Path dbus.ObjectPath
}

func (r ref) String() string { return r.Bus + "|" + string(r.Path) }

func parseRef(s string) (ref, bool) {
	bus, path, ok := strings.Cut(s, "|")
	if !ok || bus == "" || !dbus.ObjectPath(path).IsValid() {
		return ref{}, false
	}
	return ref{Bus: bus, Path: dbus.ObjectPath(path)}, true
}

// states is AT-SPI's state set.
type states []uint32

func (s states) has(bit int) bool {
	w := bit / 32
	return w < len(s) && s[w]&(1<<(bit%32)) != 0
}

// bus is a connection to the accessibility bus.
type bus struct {
	conn *dbus.Conn
}

// dialA11y asks the session bus for the accessibility bus's address
// (org.a11y.Bus GetAddress, which starts the bus when needed) and connects
// to it.
func dialA11y(ctx context.Context, sessionAddr string) (*bus, error) {
	sess, err := dbus.Connect(sessionAddr, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("connect session bus: %w", err)
	}
	defer sess.Close()
	var addr string
	if err := sess.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil {
		return nil, fmt.Errorf("get accessibility bus address: %w", err)
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("connect accessibility bus %s: %w", addr, err)
	}
	return &bus{conn: conn}, nil
}

func (b *bus) close() error { return b.conn.Close() }

func (b *bus) obj(r ref) dbus.BusObject { return b.conn.Object(r.Bus, r.Path) }

// call calls one method and stores its results.
func (b *bus) call(ctx context.Context, r ref, method string, out []any, args ...any) error {
	c := b.obj(r).CallWithContext(ctx, method, 0, args...)
	if c.Err != nil {
		return classify(c.Err)
	}
	if len(out) == 0 {
		return nil
	}
	return c.Store(out...)
}

// prop reads one property.
func (b *bus) prop(ctx context.Context, r ref, iface, name string, out any) error {
	var v dbus.Variant
	if err := b.call(ctx, r, "org.freedesktop.DBus.Properties.Get", []any{&v}, iface, name); err != nil {
		return err
	}
	return v.Store(out)
}

// errGone marks an object or application that no longer exists.
var errGone = errors.New("accessible object is gone")

// classify turns D-Bus errors that mean "no such object" into errGone.
func classify(err error) error {
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.ServiceUnknown",
			"org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.UnknownMethod",
			"org.freedesktop.DBus.Error.NoReply":
			return fmt.Errorf("%w: %s", errGone, de.Name)
		}
	}
	return err
}

// apps lists the applications registered with the AT-SPI registry.
func (b *bus) apps(ctx context.Context) ([]ref, error) {
	var kids []ref
	if err := b.call(ctx, ref{registryName, rootPath}, ifAccessible+".GetChildren", []any{&kids}); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	return kids, nil
}

// pid returns the process id owning an application's bus name.
func (b *bus) pid(ctx context.Context, busName string) (uint32, error) {
	var pid uint32
	err := b.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, busName).Store(&pid)
	return pid, err
}

// raw is one accessible object as read in one pass.
type raw struct {
	ref
	role, name, desc string
	states           states
	ifaces           map[string]bool
	children         []ref
	bounds           [4]int32
	value            string
	parent           int // index in the walk, -1 for a window
	depth            int
}

// pending is a batch of calls in flight.
type pending struct {
	calls []*dbus.Call
}

func (p *pending) add(c *dbus.Call) *dbus.Call { p.calls = append(p.calls, c); return c }

func (p *pending) wait(ctx context.Context) error {
	for _, c := range p.calls {
		select {
		case <-c.Done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (b *bus) goCall(ctx context.Context, p *pending, r ref, method string, args ...any) *dbus.Call {
	return p.add(b.obj(r).GoWithContext(ctx, method, 0, make(chan *dbus.Call, 1), args...))
}
