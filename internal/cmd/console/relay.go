package consolecmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/console"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/store"
)

// DefaultRelayPrincipal is the principal whose token is the relay
// credential unless --relay-principal names another.
const DefaultRelayPrincipal = "console-relay"

// RelayTokenEnv holds a front console's relay credential when
// --relay-token-file is not given.
const RelayTokenEnv = "CUA_RELAY_TOKEN"

// RelayFlags are a worker's session relay flags: --park turns parking on,
// --relay is where the relay listens (loopback by default; a remote
// address needs --allow-remote and TLS, as the console), --relay-url the
// address queue rows name, --relay-principal the principal whose token
// front consoles present.
type RelayFlags struct {
	Park      bool
	Timeout   time.Duration
	Principal string
	URL       string
	Listen    ParkFlags
}

// BindRelay adds --park, --park-timeout, --relay, --relay-url,
// --relay-principal, --relay-allow-remote, --relay-tls-cert and
// --relay-tls-key.
func BindRelay(cmd *cobra.Command, r *RelayFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&r.Park, "park", false, "park a run that needs a person and keep its session for an operator (through the session relay) instead of ending it")
	fl.DurationVar(&r.Timeout, "park-timeout", 15*time.Minute, "how long a parked run waits for an operator before it ends NEEDS_HUMAN (the job timeout grows by it)")
	fl.StringVar(&r.Listen.Addr, "relay", "127.0.0.1:0", "address of the session relay serving parked runs to front consoles")
	fl.StringVar(&r.URL, "relay-url", "", "base URL queue rows name for the relay (default the address it listens on)")
	fl.StringVar(&r.Principal, "relay-principal", DefaultRelayPrincipal, "principal whose token front consoles present to the relay")
	fl.BoolVar(&r.Listen.AllowRemote, "relay-allow-remote", false, "let the relay listen on a non-loopback address (needs --relay-tls-cert and --relay-tls-key)")
	fl.StringVar(&r.Listen.TLSCert, "relay-tls-cert", "", "PEM certificate (chain) file: the relay serves HTTPS")
	fl.StringVar(&r.Listen.TLSKey, "relay-tls-key", "", "PEM private key file of --relay-tls-cert")
}

// Validate checks the relay flags before anything opens.
func (r *RelayFlags) Validate() error {
	if !r.Park {
		return nil
	}
	if r.Timeout <= 0 {
		return cmdutil.FlagErrorf("--park-timeout %s: must be positive", r.Timeout)
	}
	if err := principal.CheckName(r.Principal); err != nil {
		return cmdutil.FlagErrorf("--relay-principal: %v", err)
	}
	if r.URL != "" && !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
		return cmdutil.FlagErrorf("--relay-url %q: want an http:// or https:// URL", r.URL)
	}
	if err := r.Listen.Validate(); err != nil {
		return cmdutil.FlagErrorf("--relay: %v", strings.TrimPrefix(err.Error(), "console: "))
	}
	return nil
}

// Hold is how much longer a job may last because its run may park: the
// park timeout with --park, else 0.
func (r *RelayFlags) Hold() time.Duration {
	if !r.Park {
		return 0
	}
	return r.Timeout
}

// Start opens the session relay with --park (see StartRelay) and returns
// it, the runs' parker, with what closes it; without --park it returns
// nil and a no-op.
func (r *RelayFlags) Start(ctx context.Context, st store.Store, red *redact.Redactor, f *cmdutil.IOStreams) (*console.Server, func(), error) {
	if !r.Park {
		return nil, func() {}, nil
	}
	srv, err := StartRelay(ctx, *r, st, red, f)
	if err != nil {
		return nil, nil, err
	}
	return srv, func() { _ = srv.Close() }, nil
}

// StartRelay opens the worker's session relay over st: a console in relay
// mode whose callers are front consoles presenting r.Principal's token.
// It is the runtime.Parker of the worker's runs.
func StartRelay(ctx context.Context, r RelayFlags, st store.Store, red *redact.Redactor, f *cmdutil.IOStreams) (*console.Server, error) {
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: hitlstore.New(st), Redact: red.String,
		Logger: cmdutil.NewLogger(f.ErrOut, red),
		NewID:  func() string { return "pk-" + time.Now().UTC().Format("20060102T150405.000000") }})
	if err != nil {
		return nil, err
	}
	srv, err := console.New(console.Config{Addr: r.Listen.Addr, AllowRemote: r.Listen.AllowRemote, TLS: r.Listen.tls,
		Relay: RelayAuthenticator(st, r.Principal), Broker: br, Advertise: r.URL, Logger: cmdutil.NewLogger(f.ErrOut, red)})
	if err != nil {
		return nil, err
	}
	if err := srv.Open(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(f.ErrOut, "relay: %s (parked runs, for consoles presenting %s's token)\n", srv.URL(), r.Principal)
	return srv, nil
}

// RelayAuthenticator checks a front console calling a relay over st's
// principal directory: the bearer token must be relayName's (verified,
// active), and the operator a different active, unlocked principal.
func RelayAuthenticator(st store.Store, relayName string) console.RelayAuth {
	dir := principal.NewDirectory(st, nil)
	return console.RelayAuthFunc(func(ctx context.Context, token, operator string) (console.Identity, error) {
		who, err := dir.Authenticate(ctx, token)
		if err != nil {
			return console.Identity{}, err
		}
		if !who.Verified || who.Name != relayName {
			return console.Identity{}, fmt.Errorf("relay: %s is not the relay principal %s", who, relayName)
		}
		if operator == relayName {
			return console.Identity{}, errors.New("relay: the relay principal acts for nobody but an operator")
		}
		rec, err := st.GetPrincipal(ctx, operator)
		if err != nil {
			return console.Identity{}, fmt.Errorf("relay: operator %q: %w", operator, err)
		}
		if !rec.DisabledAt.IsZero() || rec.LockedUntil.After(time.Now()) || principal.CheckRole(principal.Role(rec.Role)) != nil {
			return console.Identity{}, fmt.Errorf("relay: operator %q may not act now", operator)
		}
		return console.Identity{Name: rec.Name, Role: rec.Role}, nil
	})
}

// maxToken bounds a relay token file.
const maxToken = 4 << 10

// relayClient reads a front console's relay credential: --relay-token-file
// (a regular file read through fsx), else $CUA_RELAY_TOKEN; nil when
// neither is given (sessions parked elsewhere are then listed, not
// reachable).
func relayClient(file string, getenv func(string) string) (*console.RelayClient, error) {
	tok := ""
	if file != "" {
		b, err := fsx.ReadFile(file, maxToken)
		if err != nil {
			return nil, cmdutil.FlagErrorf("--relay-token-file: %v", err)
		}
		if tok = strings.TrimSpace(string(b)); tok == "" {
			return nil, cmdutil.FlagErrorf("--relay-token-file %s: empty", file)
		}
	} else if tok = strings.TrimSpace(getenv(RelayTokenEnv)); tok == "" {
		return nil, nil
	}
	if _, ok := principal.ParseToken(tok); !ok {
		what := "--relay-token-file " + file
		if file == "" {
			what = "$" + RelayTokenEnv
		}
		return nil, cmdutil.FlagErrorf("%s: not a principal token (cua users add %s prints one)", what, DefaultRelayPrincipal)
	}
	return &console.RelayClient{Token: tok, Client: &http.Client{}}, nil
}
