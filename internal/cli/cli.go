// Package cli is cua's command line: the cobra commands and the composition
// root that wires adapters together. Only Main turns errors into exit codes.
package cli

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/secret"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's streams.
func System() *IOStreams { return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// Factory carries what every command needs.
type Factory struct {
	IO *IOStreams
	// Getenv reads the environment (injected for tests).
	Getenv func(string) string
}

// FlagError is a usage error: bad flags or arguments.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

func flagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ExitError carries an exit code decided by a command (a run's status).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// errSilent marks an error whose message the command already printed.
type silentError struct{ err error }

func (e *silentError) Error() string { return e.err.Error() }
func (e *silentError) Unwrap() error { return e.err }

// InterruptGrace is how long Main waits, once ctx is cancelled (SIGINT or
// SIGTERM in cmd/cua), for the command to wind down before it returns
// ExitInterrupted anyway. Together with the command's own reaction this
// keeps every command's exit within a second of the signal.
const InterruptGrace = 750 * time.Millisecond

// ExitInterrupted is the exit code when a command did not stop within
// InterruptGrace of its context's end (128 + SIGINT, as shells report).
const ExitInterrupted = 130

// Main runs the command line and returns the process exit code.
//
// It first moves every CUA_SECRET_* variable out of the process
// environment into memory (the commands still see them through
// Factory.Getenv), so no child process can inherit one. ctx is the root
// context: cancel it (cmd/cua does so on SIGINT and SIGTERM) and Main
// returns within InterruptGrace, even if the command is stuck.
func Main(ctx context.Context, args []string, io *IOStreams) int {
	secrets := secret.TakeEnv()
	getenv := func(k string) string {
		if v, ok := secrets[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	f := &Factory{IO: io, Getenv: getenv}
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	done := make(chan int, 1)
	go func() { done <- exitCode(root.ExecuteContext(ctx), io.ErrOut) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	t := time.NewTimer(InterruptGrace)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-t.C:
		fmt.Fprintln(io.ErrOut, "error: interrupted")
		return ExitInterrupted
	}
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var se *silentError
	if !errors.As(err, &se) {
		fmt.Fprintln(stderr, "error:", err)
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		fmt.Fprintln(stderr, "Run 'cua --help' for usage.")
	}
	return 1
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "cua",
		Short:         "Compile a UI workflow once, replay it deterministically with no model",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &FlagError{Err: err} })
	root.AddCommand(newCmdVersion(f, nil))
	root.AddCommand(newCmdCapability(f))
	root.AddCommand(newCmdMockapp(f, nil))
	root.AddCommand(newCmdReplay(f, nil))
	root.AddCommand(newCmdDemo(f, nil))
	root.AddCommand(newCmdDiscover(f, nil))
	root.AddCommand(newCmdSecrets(f))
	root.AddCommand(newCmdCatalog(f), newCmdRuns(f))
	root.AddCommand(newCmdVerify(f, nil))
	return root
}

// JSONSchemaVersion versions every --json document cua prints.
const JSONSchemaVersion = 1

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return flagErrorf("expected %s, got %d argument(s)", what, len(args))
		}
		return nil
	}
}

// dataDirFlag binds --data-dir (resolved by launch.DataDir) into p.
func dataDirFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "data-dir", "", "data directory (default $CUA_DATA_DIR or .cua)")
}

// pairsFlag parses a repeatable NAME=VALUE flag; an error names the flag.
func pairsFlag(flag string, pairs []string) (map[string]string, error) {
	m, err := pipeline.ParseInputs(pairs)
	if err != nil {
		return nil, flagErrorf("%s %v", flag, err)
	}
	return m, nil
}

// httpURL refuses a flag's value that is not an http(s) URL with a host.
func httpURL(flag, s string) error {
	if u, err := url.Parse(s); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return flagErrorf("%s %q: want an http(s) URL", flag, s)
	}
	return nil
}

// newLogger logs warnings and errors to w through red.
func newLogger(w io.Writer, red *redact.Redactor) *slog.Logger {
	return slog.New(redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}), red))
}

//go:embed help
var helpFiles embed.FS

// help returns the long help (before a line "---") or, with examples, the
// examples (after it) of the command's help/NAME.txt.
func help(name string, examples bool) string {
	raw, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // embedded at build time: a missing file is a build mistake
	}
	long, ex, _ := strings.Cut(string(raw), "\n---\n")
	if examples {
		return ex
	}
	return long
}
