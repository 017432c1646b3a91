package cmdutil

import (
	"context"
	"fmt"
	"os"
	"os/user"

	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
)

// The environment variables naming the principal a command runs as.
const (
	PrincipalTokenEnv     = "CUA_PRINCIPAL_TOKEN"
	PrincipalTokenFileEnv = "CUA_PRINCIPAL_TOKEN_FILE"
)

// OSUser returns who runs the process as user@host, each part cleaned to
// letters, digits, '.', '_' and '-' (principal.CleanOSUser).
func OSUser() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return principal.CleanOSUser(name, host)
}

// Principal resolves who runs the command against the principals of st:
// with a token (CUA_PRINCIPAL_TOKEN) it must authenticate, and any failure
// is an error naming CUA_PRINCIPAL_TOKEN, never a fallback; without one it
// is the OS user, unverified.
func (f *Factory) Principal(ctx context.Context, st store.Store) (principal.Principal, error) {
	token := ""
	if f.PrincipalToken != nil {
		var err error
		if token, err = f.PrincipalToken(); err != nil {
			return principal.Principal{}, err
		}
	}
	p, err := principal.NewDirectory(st, nil).CLI(ctx, token, OSUser())
	if err != nil && token != "" {
		return principal.Principal{}, fmt.Errorf("%s: %w", PrincipalTokenEnv, err)
	}
	return p, err
}
