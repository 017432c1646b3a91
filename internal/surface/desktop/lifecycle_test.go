package desktop_test

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/desktop"
)

// TestAttachToRunningApplication attaches to an application someone else
// started (no Command): it is found by its AT-SPI name, observed, and left
// running when the session closes; when it quits, the surface reports
// ErrCrashed. It is not parallel: no other Mousepad may run meanwhile, so
// the name finds this one.
func TestAttachToRunningApplication(t *testing.T) {
	e := session(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
	defer cancel()
	app := exec.Command("mousepad", "--disable-server")
	app.Env = e.Environ()
	app.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = app.Wait(); close(done) }()
	defer func() { _ = syscall.Kill(-app.Process.Pid, syscall.SIGKILL); <-done }()

	s, err := desktop.Open(ctx, desktop.Config{Display: e.Display, SessionBus: e.SessionBus, App: "mousepad"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Title != "Untitled 1 - Mousepad" {
		t.Errorf("title = %q, want Mousepad's window", snap.Title)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("closing an attached session ended the application")
	case <-time.After(200 * time.Millisecond):
	}

	s, err = desktop.Open(ctx, desktop.Config{Display: e.Display, SessionBus: e.SessionBus, App: "mousepad"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = syscall.Kill(-app.Process.Pid, syscall.SIGKILL)
	<-done
	deadline := time.Now().Add(60 * time.Second) // a passing poll ends at the first ErrCrashed
	for {
		_, err := s.Observe(ctx)
		if errors.Is(err, surface.ErrCrashed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Observe after the application quit: %v, want ErrCrashed", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := s.ChangedSince(ctx, 0); !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("ChangedSince after the application quit: %v, want ErrCrashed", err)
	}
}

// TestNavigateRefusesAnotherApplication keeps the allowlist meaningful: a
// URL whose host names another executable is not opened by this session.
func TestNavigateRefusesAnotherApplication(t *testing.T) {
	t.Parallel()
	s := openFixture(t)
	eng := newEngine(t, "mousepad")
	_, err := s.Dispatch(context.Background(), nav(t, eng, "http://mousepad/"))
	if !errors.Is(err, surface.ErrUnsupported) {
		t.Fatalf("navigate to another application: err = %v, want ErrUnsupported", err)
	}
}
