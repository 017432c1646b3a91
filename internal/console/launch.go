package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/hitl"
)

// Options are what a command gives to start a console.
type Options struct {
	Addr        string
	AllowRemote bool
	// TokenFile holds the sign-in token; empty generates one, printed at
	// start.
	TokenFile string
	// Queue persists the intervention queue (hitl/hitlstore over the
	// command's store).
	Queue hitl.Queue
	// Redact redacts what is queued and logged.
	Redact  func(string) string
	HoldTTL time.Duration
	Logger  *slog.Logger
}

// ReadToken reads a sign-in token from a file: its first line, at least 16
// characters.
func ReadToken(path string) (string, error) {
	b, err := fsx.ReadFile(path, fsx.MaxToken)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < 16 {
		return "", errors.New("token file: the token must be 16 characters or more")
	}
	return tok, nil
}

// Start opens a console with its broker and writes where it listens and,
// for a generated token, the token to w. Close it when done.
func Start(ctx context.Context, o Options, w io.Writer) (*Server, error) {
	tok := NewToken()
	if o.TokenFile != "" {
		var err error
		if tok, err = ReadToken(o.TokenFile); err != nil {
			return nil, err
		}
	}
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: o.Queue, Redact: o.Redact, HoldTTL: o.HoldTTL, Logger: o.Logger,
		NewID: func() string { return "w" + time.Now().UTC().Format("20060102T150405") + "-" + randHex(4) }})
	if err != nil {
		return nil, err
	}
	srv, err := New(Config{Addr: o.Addr, AllowRemote: o.AllowRemote, Token: tok, Broker: br, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	if err := srv.Open(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "console: %s/\n", srv.URL())
	if o.TokenFile == "" {
		fmt.Fprintf(w, "console: sign-in token %s\n", tok)
	}
	return srv, nil
}
