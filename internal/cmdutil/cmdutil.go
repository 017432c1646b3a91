// Package cmdutil holds what every cua command shares: the standard
// streams, the Factory handed to each command's constructor, the error
// types that decide exit codes, and small flag helpers.
//
// It owns no engine logic and no command: commands live one per package
// under internal/cmd, and internal/cli assembles them. It must never import
// an engine package beyond the helpers the flags need (pipeline's input
// parsing, launch's store options, the catalog they open, redact for
// loggers).
package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/report"
	"github.com/cuahq/cua/internal/store"
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
	// PrincipalToken returns the principal token the command runs with
	// (CUA_PRINCIPAL_TOKEN, or the file CUA_PRINCIPAL_TOKEN_FILE names,
	// taken at start), "" for none; nil is none. See [Factory.Principal].
	PrincipalToken func() (string, error)
}

// FlagError is a usage error: bad flags or arguments.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a FlagError with a formatted message; the message
// names the flag or argument that is wrong.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// DrainsOnSignal is the cobra annotation of a command that winds itself
// down on SIGINT or SIGTERM within a bound it keeps (a queue worker
// draining its runs) and stops at a second signal: the root waits for it
// instead of giving up after its short grace.
const DrainsOnSignal = "cua/drains-on-signal"

// ExitError carries an exit code decided by a command (a run's status).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// SilentError marks an error whose message the command already printed:
// the process exits 1 without printing it again.
type SilentError struct{ Err error }

func (e *SilentError) Error() string { return e.Err.Error() }
func (e *SilentError) Unwrap() error { return e.Err }

// JSONSchemaVersion versions every --json document cua prints.
const JSONSchemaVersion = 1

// version is set at build time with
// -ldflags "-X github.com/cuahq/cua/internal/cmdutil.version=v1.2.3".
var version = ""

// Version returns the build's version string.
func Version() string { return report.BuildVersion(version) }

// WriteJSON prints v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ExactArgs refuses any number of positional arguments but n; what says
// what they are ("one REF").
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return FlagErrorf("expected %s, got %d argument(s)", what, len(args))
		}
		return nil
	}
}

// DataDirFlag binds --data-dir (resolved by launch.DataDir) into p.
func DataDirFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "data-dir", "", "data directory (default $CUA_DATA_DIR or .cua)")
}

// PairsFlag parses a repeatable NAME=VALUE flag; an error names the flag.
func PairsFlag(flag string, pairs []string) (map[string]string, error) {
	m, err := pipeline.ParseInputs(pairs)
	if err != nil {
		return nil, FlagErrorf("%s %v", flag, err)
	}
	return m, nil
}

// HTTPURL refuses a flag's value that is not an http(s) URL with a host.
func HTTPURL(flag, s string) error {
	if u, err := url.Parse(s); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return FlagErrorf("%s %q: want an http(s) URL", flag, s)
	}
	return nil
}

// NewLogger logs warnings and errors to w through red.
func NewLogger(w io.Writer, red *redact.Redactor) *slog.Logger {
	return slog.New(redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}), red))
}

// Help returns the long help (before a line "---") or, with examples, the
// examples (after it) of a command's embedded help text.
func Help(raw string, examples bool) string {
	long, ex, _ := strings.Cut(raw, "\n---\n")
	if examples {
		return ex
	}
	return long
}

// StoreFlags binds --db and, with dataDir, --data-dir into o.
func StoreFlags(cmd *cobra.Command, o *launch.StoreOptions, dataDir bool) {
	cmd.Flags().StringVar(&o.DB, "db", "", "PostgreSQL URL (default $CUA_DB, else SQLite at <data-dir>/cua.db)")
	if dataDir {
		DataDirFlag(cmd, &o.DataDir)
	}
}

// OpenCatalog opens the store o locates and the catalog over it; close the
// store after use. A malformed --db is a FlagError.
func OpenCatalog(ctx context.Context, o launch.StoreOptions) (*catalog.Catalog, store.Store, error) {
	cat, st, err := launch.Catalog(ctx, o)
	if errors.Is(err, launch.ErrDBSpec) {
		return nil, nil, FlagErrorf("--db: %v", err)
	}
	return cat, st, err
}

// CatalogCmd builds a subcommand that opens the catalog and calls run.
func CatalogCmd(f *Factory, use, short string, args cobra.PositionalArgs, run func(context.Context, *catalog.Catalog, []string) error) *cobra.Command {
	db := &launch.StoreOptions{Getenv: f.Getenv}
	cmd := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(c *cobra.Command, a []string) error {
		cat, st, err := OpenCatalog(c.Context(), *db)
		if err != nil {
			return err
		}
		defer st.Close()
		return run(c.Context(), cat, a)
	}}
	StoreFlags(cmd, db, true)
	return cmd
}

// Write prints v with print, unless err is set.
func Write[T any](w io.Writer, v T, err error, print func(io.Writer, T) error) error {
	if err != nil {
		return err
	}
	return print(w, v)
}

// TestFactory returns a Factory over buffers and env, for command tests:
// stdin is empty, and Getenv reads env only.
func TestFactory(env map[string]string) (f *Factory, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	io := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	return &Factory{IO: io, Getenv: func(k string) string { return env[k] },
		PrincipalToken: func() (string, error) { return env[PrincipalTokenEnv], nil }}, out, errOut
}
