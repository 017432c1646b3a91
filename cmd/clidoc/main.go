// Command clidoc writes cua's CLI reference, one Markdown page per
// command, into docs/reference/cli (`make docs`), or with -check reports
// the pages that differ from the command tree and exits 1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cuahq/cua/internal/cli"
	"github.com/cuahq/cua/internal/clidoc"
	"github.com/cuahq/cua/internal/cmdutil"
)

func main() {
	dir := flag.String("dir", clidoc.Dir, "the directory the pages go to")
	check := flag.Bool("check", false, "report pages that differ from the tree instead of writing them")
	flag.Parse()
	// An empty environment: a page never shows this machine's CUA_* values.
	f, _, _ := cmdutil.TestFactory(nil)
	pages := clidoc.Pages(cli.NewRootCmd(f))
	if *check {
		diffs, err := clidoc.Check(*dir, pages)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, d := range diffs {
			fmt.Fprintln(os.Stderr, d)
		}
		if len(diffs) > 0 {
			os.Exit(1)
		}
		return
	}
	if err := clidoc.Write(*dir, pages); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d pages in %s\n", len(pages), *dir)
}
