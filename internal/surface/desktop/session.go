package desktop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Env is a private desktop session: an X server (Xvfb) on a free display
// and a D-Bus session bus whose activation starts the AT-SPI bus and
// registry on first use. Everything it starts runs in process groups it
// ends in [Env.Close].
type Env struct {
	// Display is the X display ("":N").
	Display string
	// SessionBus is the D-Bus session bus address.
	SessionBus string

	dir    string
	groups []*exec.Cmd
	log    *slog.Logger
}

// EnvOptions configures [StartEnv].
type EnvOptions struct {
	// Display attaches to an existing X server instead of starting Xvfb.
	Display string
	// Screen is Xvfb's screen geometry; default 1280x800x24.
	Screen string
	Logger *slog.Logger
}

// StartEnv starts the session: Xvfb on a display it picks (-displayfd)
// unless opts.Display names one, then a private dbus-daemon. It returns an
// error naming the program that did not start; nothing is left running
// then.
func StartEnv(ctx context.Context, opts EnvOptions) (_ *Env, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := os.MkdirTemp("", "cua-desktop-")
	if err != nil {
		return nil, fmt.Errorf("desktop session dir: %w", err)
	}
	e := &Env{dir: dir, log: log, Display: opts.Display}
	defer func() {
		if err != nil {
			_ = e.Close()
		}
	}()
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	if e.Display == "" {
		screen := opts.Screen
		if screen == "" {
			screen = "1280x800x24"
		}
		out, err := e.startReporting(ctx, "Xvfb", "-displayfd", "3", "-screen", "0", screen, "-nolisten", "tcp", "-noreset")
		if err != nil {
			return nil, err
		}
		e.Display = ":" + out
	}
	addr, err := e.startReporting(ctx, "dbus-daemon", "--session", "--nofork", "--nopidfile",
		"--address=unix:path="+filepath.Join(dir, "bus"), "--print-address=3")
	if err != nil {
		return nil, err
	}
	e.SessionBus = addr
	log.InfoContext(ctx, "desktop session started", slog.String("display", e.Display))
	return e, nil
}

// startReporting starts a program in its own process group with fd 3 a
// pipe, and returns the first line it writes there (Xvfb's display number,
// dbus-daemon's address).
func (e *Env) startReporting(ctx context.Context, name string, args ...string) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer r.Close()
	cmd := exec.Command(name, args...)
	cmd.Env = e.Environ()
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		w.Close()
		return "", fmt.Errorf("start %s: %w", name, err)
	}
	w.Close()
	e.groups = append(e.groups, cmd)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		if s == "" {
			return "", fmt.Errorf("start %s: it exited before it was ready", name)
		}
		return s, nil
	case <-time.After(15 * time.Second):
		return "", fmt.Errorf("start %s: not ready after 15s", name)
	case <-ctx.Done():
		return "", fmt.Errorf("start %s: %w", name, ctx.Err())
	}
}

// Environ is the explicit environment of the session's programs and of the
// applications launched in it: the display, the session bus, a private
// runtime and home directory, and the switches that make GTK and Qt
// applications export their accessibility tree. Nothing else of the
// caller's environment is passed on but PATH and the locale.
func (e *Env) Environ() []string {
	env := []string{
		"DISPLAY=" + e.Display,
		"XDG_RUNTIME_DIR=" + e.dir,
		"HOME=" + e.dir,
		"NO_AT_BRIDGE=0",
		"GTK_A11Y=atk",
		"ACCESSIBILITY_ENABLED=1",
		"QT_ACCESSIBILITY=1",
		"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1",
		"GDK_BACKEND=x11",
		"GSETTINGS_BACKEND=memory",
		"LANG=C.UTF-8",
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
	}
	if e.SessionBus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+e.SessionBus)
	}
	return env
}

// AttachEnviron is the environment of applications launched on an existing
// desktop (a display and its session bus), with the same accessibility
// switches as [Env.Environ] and the caller's HOME.
func AttachEnviron(display, sessionBus string) []string {
	e := &Env{Display: display, SessionBus: sessionBus, dir: envOr("XDG_RUNTIME_DIR", "/tmp")}
	env := e.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			env[i] = "HOME=" + envOr("HOME", e.dir)
		}
	}
	return env
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Close ends every process group the session started (the bus first, so
// the AT-SPI bus it activated goes with it, then the X server) and removes
// its directory. It is safe to call more than once.
func (e *Env) Close() error {
	var errs []error
	for i := len(e.groups) - 1; i >= 0; i-- {
		endGroup(e.groups[i])
	}
	e.groups = nil
	if e.dir != "" {
		errs = append(errs, os.RemoveAll(e.dir))
		e.dir = ""
	}
	return errors.Join(errs...)
}

// endGroup sends SIGTERM to a process group, waits up to two seconds for
// its leader, then SIGKILLs the group and waits (up to two seconds more)
// until no member is left.
func endGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-done
	// Members the leader did not start itself (a bus's activated services)
	// are reaped by init: wait until none is running.
	for range 100 {
		if !groupAlive(pgid) {
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// groupAlive reports whether a process of the group is still running (not
// a zombie waiting for init to reap it), from /proc.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so split
		// after its closing parenthesis.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}
