package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/hitl"
)

// Options are what a command gives to start a console.
type Options struct {
	Addr        string
	AllowRemote bool
	// TLS, when set, serves HTTPS (LoadTLS reads it); a non-loopback Addr
	// needs it.
	TLS *tls.Certificate
	// Auth checks the principal tokens people sign in with (the principal
	// directory over the command's store).
	Auth Authenticator
	// Queue persists the intervention queue (hitl/hitlstore over the
	// command's store).
	Queue hitl.Queue
	// Redact redacts what is queued and logged.
	Redact  func(string) string
	HoldTTL time.Duration
	Logger  *slog.Logger
	// Fronts reaches the sessions parked in workers through their relays
	// (the relay credential); nil: they are listed, not reachable.
	Fronts *RelayClient
}

// maxPEM bounds a TLS certificate chain or key file.
const maxPEM = 1 << 20

// LoadTLS reads a PEM certificate (chain) and its private key, each a
// regular file read through fsx, and checks they form a pair. Errors name
// the flag and the file.
func LoadTLS(certFile, keyFile string) (*tls.Certificate, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("console: --tls-cert and --tls-key go together: give both")
	}
	certPEM, err := fsx.ReadFile(certFile, maxPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %w", err)
	}
	keyPEM, err := fsx.ReadFile(keyFile, maxPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", certFile, keyFile, err)
	}
	return &cert, nil
}

// Start opens a console with its broker and writes where it listens to w.
// Close it when done.
func Start(ctx context.Context, o Options, w io.Writer) (*Server, error) {
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: o.Queue, Redact: o.Redact, HoldTTL: o.HoldTTL, Logger: o.Logger,
		NewID: func() string { return "w" + time.Now().UTC().Format("20060102T150405") + "-" + randHex(4) }})
	if err != nil {
		return nil, err
	}
	srv, err := New(Config{Addr: o.Addr, AllowRemote: o.AllowRemote, TLS: o.TLS, Auth: o.Auth, Broker: br, Logger: o.Logger,
		Fronts: o.Fronts})
	if err != nil {
		return nil, err
	}
	if err := srv.Open(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "console: %s/ (sign in with a principal token: cua users add NAME --role operator)\n", srv.URL())
	return srv, nil
}
