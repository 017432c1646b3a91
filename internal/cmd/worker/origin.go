package workercmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/policy"
)

// AllowOriginFlag binds --allow-origin (repeatable) on every command that
// works runs with the secrets it holds (worker, serve, batch): the origins
// a run's base URL may name besides the full origins its sealed
// capability declares. Each value is checked and stored as
// scheme://host:port when the flag is parsed.
func AllowOriginFlag(cmd *cobra.Command, origins *[]string) {
	cmd.Flags().Var(&originList{list: origins}, "allow-origin",
		"an origin (scheme://host[:port]) runs may be sent to and type this process's secrets into, besides those their capability declares (repeatable; any other base URL is refused DOMAIN_NOT_ALLOWED)")
}

// originList is a repeatable flag of canonical origins.
type originList struct{ list *[]string }

func (l *originList) String() string {
	if l.list == nil {
		return ""
	}
	return strings.Join(*l.list, ",")
}

func (l *originList) Set(s string) error {
	o, err := policy.AllowOrigin(s)
	if err != nil {
		return err
	}
	if !slices.Contains(*l.list, o) {
		*l.list = append(*l.list, o)
	}
	return nil
}

func (l *originList) Type() string { return "origin" }
