package cli

import (
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpRendersFlagsAsWritten walks the whole command tree: no flag's
// usage holds a backquoted word, which pflag would take for the flag's
// value name and print in place of its type (`--safe cua verify`).
func TestHelpRendersFlagsAsWritten(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if strings.Contains(fl.Usage, "`") {
				t.Errorf("%s --%s: usage %q has a backquote; pflag prints the quoted word as the flag's value name", c.CommandPath(), fl.Name, fl.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd(setup(t).factory()))
}

// TestHelpExamplesUseTheirOwnPorts: an example address in one command's
// help is not the default address of another long-running command (a
// reader who runs both at once gets "address already in use").
func TestHelpExamplesUseTheirOwnPorts(t *testing.T) {
	t.Parallel()
	root := NewRootCmd(setup(t).factory())
	defaults := map[string]string{} // port -> the command whose --addr (or --base-url) default it is
	for _, c := range root.Commands() {
		for _, name := range []string{"addr"} {
			if fl := c.Flags().Lookup(name); fl != nil {
				if _, port, err := net.SplitHostPort(fl.DefValue); err == nil && port != "0" {
					defaults[port] = c.Name()
				}
			}
		}
	}
	if len(defaults) < 3 {
		t.Fatalf("found the default ports of only %v", defaults)
	}
	// An example line runs cua NAME; its address may be NAME's own default.
	addr := regexp.MustCompile(`cua ([a-z]+)[^\n]*?--(?:http|addr) 127\.0\.0\.1:(\d+)`)
	for _, c := range root.Commands() {
		for _, m := range addr.FindAllStringSubmatch(c.Example, -1) {
			if owner, ok := defaults[m[2]]; ok && owner != m[1] {
				t.Errorf("cua %s --help: example %q gives cua %s port %s, the default of cua %s", c.Name(), m[0], m[1], m[2], owner)
			}
		}
	}
}
