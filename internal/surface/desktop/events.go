package desktop

import (
	"context"
	"strings"

	"github.com/godbus/dbus/v5"
)

// eventKinds are the AT-SPI event classes that mean "the screen changed":
// object events (children, names, states, text, values, selection) and
// window events (created, destroyed, activated).
var eventKinds = []string{"object:", "window:"}

// listen subscribes to AT-SPI's events: it asks the registry to have
// applications emit them (RegisterEvent; toolkits send none nobody asked
// for) and matches their signals on this connection. It returns the
// channel the signals arrive on; the connection closes it.
func (b *bus) listen(ctx context.Context) (<-chan *dbus.Signal, error) {
	for _, iface := range []string{"org.a11y.atspi.Event.Object", "org.a11y.atspi.Event.Window"} {
		if err := b.conn.AddMatchSignalContext(ctx, dbus.WithMatchInterface(iface)); err != nil {
			return nil, err
		}
	}
	reg := ref{registryName, "/org/a11y/atspi/registry"}
	for _, kind := range eventKinds {
		if err := b.call(ctx, reg, registryName+".RegisterEvent", nil, kind, []string{}, ""); err != nil {
			return nil, err
		}
	}
	ch := make(chan *dbus.Signal, 256)
	b.conn.Signal(ch)
	return ch, nil
}

// isChange reports whether an event signal changes what a snapshot shows.
// Bounds and visible-data events of layout churn count; mouse and
// announcement events do not.
func isChange(sig *dbus.Signal) bool {
	switch {
	case strings.HasSuffix(sig.Name, ".Announcement"), strings.HasSuffix(sig.Name, ".LinkSelected"):
		return false
	}
	return strings.HasPrefix(sig.Name, "org.a11y.atspi.Event.Object.") || strings.HasPrefix(sig.Name, "org.a11y.atspi.Event.Window.")
}

// watch counts the application's change events until the channel closes:
// each one advances the change generation and wakes WaitChange.
func (s *Surface) watch(ch <-chan *dbus.Signal) {
	for sig := range ch {
		if !isChange(sig) {
			continue
		}
		s.mu.Lock()
		if sig.Sender == s.appBus && s.appBus != "" {
			s.gen++
			s.wakeLocked()
		}
		s.mu.Unlock()
	}
}

// wakeLocked wakes every WaitChange. s.mu is held.
func (s *Surface) wakeLocked() {
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// waiter returns a channel closed at the next change event. s.mu is held.
func (s *Surface) waiterLocked() <-chan struct{} {
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}
