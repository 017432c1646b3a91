// Package principal is cua's directory of principals: the people and
// services that act on it, each a name, a role (operator, approver, admin)
// and a secret token whose argon2id hash the store keeps. Every record of
// who did something (an approval, a revocation, a resolved intervention,
// a console or API action) names a [Principal]: a verified one by its name,
// an unverified command-line user as "user@host (unverified)".
//
// It owns names and roles, tokens, hashing and verifying secrets, lockout
// after failed sign-ins and the role gate on managing principals. It
// imports only domain and store (the port; the caller opens an adapter)
// and golang.org/x/crypto/argon2.
package principal

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Role is what a principal may do.
type Role string

// Roles. An operator runs and resolves; an approver also approves and
// revokes approvals; an admin also manages principals.
const (
	Operator Role = "operator"
	Approver Role = "approver"
	Admin    Role = "admin"
)

// CheckRole refuses a role that is not operator, approver or admin.
func CheckRole(r Role) error {
	switch r {
	case Operator, Approver, Admin:
		return nil
	}
	return fmt.Errorf("role %q: want operator, approver or admin", string(r))
}

// Principal is who did something.
type Principal struct {
	// Name is "alice" for a verified principal; for an unverified CLI user
	// it is "root@host".
	Name string
	// Role is "" when unverified.
	Role Role
	// Verified is true when the principal proved its token.
	Verified bool
}

// unverifiedSuffix marks an unverified principal's String form.
const unverifiedSuffix = " (unverified)"

// String returns "alice" when verified, "root@host (unverified)" otherwise.
func (p Principal) String() string {
	if p.Verified {
		return p.Name
	}
	return p.Name + unverifiedSuffix
}

// Can reports whether p is verified with one of roles.
func (p Principal) Can(roles ...Role) bool {
	if !p.Verified {
		return false
	}
	for _, r := range roles {
		if p.Role == r {
			return true
		}
	}
	return false
}

// Permit lets p do what on the command line: an unverified principal (the
// OS user, who holds the database anyway) is permitted and recorded as
// unverified; a verified one needs one of roles, else ErrForbidden naming
// them.
func (p Principal) Permit(what string, roles ...Role) error {
	if !p.Verified || p.Can(roles...) {
		return nil
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return fmt.Errorf("%s: %w: needs the role %s; %s is %s", what, ErrForbidden, strings.Join(names, " or "), p.Name, p.Role)
}

// nameRule is the spelling of a principal's name: lowercase, printable,
// short, with no character a terminal or a log line could misread.
var nameRule = regexp.MustCompile(`^[a-z][a-z0-9.-]{0,39}$`)

// osUserRule is the spelling of an unverified CLI user: user@host, each
// cleaned to letters, digits, '.', '_' and '-'.
var osUserRule = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}@[A-Za-z0-9._-]{1,253}$`)

// CheckName refuses a name that does not match ^[a-z][a-z0-9.-]{0,39}$; the
// error names the name (quoted, so control characters show escaped) and
// the rule.
func CheckName(name string) error {
	if !nameRule.MatchString(name) {
		return fmt.Errorf("principal name %q: want a lowercase letter, then at most 39 lowercase letters, digits, '.' or '-' (^[a-z][a-z0-9.-]{0,39}$)", name)
	}
	return nil
}

// Reserved are names no person may take: serve-token is the principal
// `cua serve` records for its deployment token.
var Reserved = []string{"serve-token"}

// CheckOSUser refuses an unverified user that is not user@host spelled
// with letters, digits, '.', '_' and '-'.
func CheckOSUser(u string) error {
	if !osUserRule.MatchString(u) {
		return fmt.Errorf("OS user %q: want user@host of letters, digits, '.', '_' and '-'", u)
	}
	return nil
}

// CleanOSUser returns user@host with every character CheckOSUser refuses
// replaced by '_' ("unknown" for an empty part), so it always passes.
func CleanOSUser(user, host string) string {
	clean := func(s string, max int) string {
		s = strings.Map(func(r rune) rune {
			if r < 0x80 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return r
			}
			return '_'
		}, s)
		if s == "" {
			return "unknown"
		}
		if len(s) > max {
			s = s[:max]
		}
		return s
	}
	return clean(user, 64) + "@" + clean(host, 253)
}

// CheckString refuses s unless it is the String form of a Principal: a
// name CheckName accepts, or "user@host (unverified)" with a user@host
// CheckOSUser accepts. Whatever records who did something checks it, so
// no control character or forged text ever reaches a record.
func CheckString(s string) error {
	if u, ok := strings.CutSuffix(s, unverifiedSuffix); ok {
		if CheckOSUser(u) == nil {
			return nil
		}
	} else if CheckName(s) == nil {
		return nil
	}
	return fmt.Errorf("principal %q: want a principal name (^[a-z][a-z0-9.-]{0,39}$) or user@host (unverified)", s)
}

// Errors of authentication and of the role gate; callers branch with
// errors.Is. The returned errors wrap them with the name concerned (never
// the token).
var (
	// ErrBadToken: the token is malformed, names no principal, or its
	// secret is wrong.
	ErrBadToken = errors.New("bad principal token")
	// ErrLocked: too many failed sign-ins in a row; the wrapper says until
	// when.
	ErrLocked = errors.New("principal locked")
	// ErrDisabled: the principal was disabled.
	ErrDisabled = errors.New("principal disabled")
	// ErrForbidden: the principal's role does not allow the action; the
	// wrapper names the role needed.
	ErrForbidden = errors.New("forbidden")
)
