// Package cli is cua's command line: it assembles the command tree from
// the command packages under internal/cmd and turns their errors into exit
// codes. Only Main does that.
//
// It owns no flags beyond the root's and no engine logic: each command's
// flags, validation and printing live in its own package, and what a
// command does lives in the engine packages it calls.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/secret"
)

// IOStreams are the command's standard streams.
type IOStreams = cmdutil.IOStreams

// Factory carries what every command needs.
type Factory = cmdutil.Factory

// System returns the process's streams.
func System() *IOStreams { return cmdutil.System() }

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
// It first moves every CUA_SECRET_* variable, CUA_SIGNING_KEY and
// CUA_PRINCIPAL_TOKEN out of the process environment into memory (the
// commands still see them through the Factory), so no child process can
// inherit one; a token in the file CUA_PRINCIPAL_TOKEN_FILE names is read
// then too. ctx is the root
// context: cancel it (cmd/cua does so on SIGINT and SIGTERM) and Main
// returns within InterruptGrace, even if the command is stuck; a command
// annotated [cmdutil.DrainsOnSignal] (cua worker, cua serve) is waited
// for: it bounds its own drain.
func Main(ctx context.Context, args []string, io *IOStreams) int {
	secrets := secret.TakeEnv()
	signkey.TakeEnv()
	token, tokenErr := takePrincipalToken()
	getenv := func(k string) string {
		if v, ok := secrets[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	f := &Factory{IO: io, Getenv: getenv, PrincipalToken: func() (string, error) { return token, tokenErr }}
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
	if c, _, err := root.Find(args); err == nil && c.Annotations[cmdutil.DrainsOnSignal] != "" {
		return <-done // it bounds its own drain and stops at a second signal
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

// takePrincipalToken removes CUA_PRINCIPAL_TOKEN from the environment and
// returns it, or else the first line of the file CUA_PRINCIPAL_TOKEN_FILE
// names (read through fsx); a file that cannot be read is an error naming
// the variable, returned to the command that asks for the token.
func takePrincipalToken() (string, error) {
	if v, ok := os.LookupEnv(cmdutil.PrincipalTokenEnv); ok {
		os.Unsetenv(cmdutil.PrincipalTokenEnv)
		return strings.TrimSpace(v), nil
	}
	path := os.Getenv(cmdutil.PrincipalTokenFileEnv)
	if path == "" {
		return "", nil
	}
	b, err := fsx.ReadFile(path, fsx.MaxToken)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmdutil.PrincipalTokenFileEnv, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", fmt.Errorf("%s: %s holds no token", cmdutil.PrincipalTokenFileEnv, path)
	}
	return line, nil
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var se *cmdutil.SilentError
	if !errors.As(err, &se) {
		fmt.Fprintln(stderr, "error:", err)
	}
	var fe *cmdutil.FlagError
	if errors.As(err, &fe) {
		fmt.Fprintln(stderr, "Run 'cua --help' for usage.")
	}
	return 1
}
