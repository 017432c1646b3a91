package clidoc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cli"
	"github.com/cuahq/cua/internal/clidoc"
	"github.com/cuahq/cua/internal/cmdutil"
)

// tree is cua's command tree as `make docs` builds it (empty environment).
func tree() *cobra.Command {
	f, _, _ := cmdutil.TestFactory(nil)
	return cli.NewRootCmd(f)
}

// TestPagesMatchTree keeps docs/reference/cli true: every command of the
// tree has its page, byte for byte as cmd/clidoc writes it, and no page is
// left for a command that is gone. A flag added without `make docs` fails
// here, naming the command and make docs.
func TestPagesMatchTree(t *testing.T) {
	diffs, err := clidoc.Check(filepath.Join("..", "..", clidoc.Dir), clidoc.Pages(tree()))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("%s/%s", clidoc.Dir, d)
	}
}

// TestCheckNamesCommandAndFix proves the check above can fail: pages
// written from the tree pass, and after a flag is added to one command, a
// command is removed and one gains a subcommand, each difference is
// reported with the command's name and `make docs`.
func TestCheckNamesCommandAndFix(t *testing.T) {
	dir := t.TempDir()
	root := tree()
	if err := clidoc.Write(dir, clidoc.Pages(root)); err != nil {
		t.Fatal(err)
	}
	if diffs, err := clidoc.Check(dir, clidoc.Pages(root)); err != nil || len(diffs) != 0 {
		t.Fatalf("fresh pages: %v %v", diffs, err)
	}
	changed := tree()
	find := func(path ...string) *cobra.Command {
		c, _, err := changed.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	find("replay").Flags().Bool("new-flag", false, "a flag nobody documented")
	changed.RemoveCommand(find("version"))
	find("users").AddCommand(&cobra.Command{Use: "purge", Short: "Purge", Run: func(*cobra.Command, []string) {}})
	diffs, err := clidoc.Check(dir, clidoc.Pages(changed))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(diffs, "\n")
	for _, want := range []string{
		"the page of cua replay differs from the command tree",
		`"      --new-flag`,
		"cua_version.md: no command has this page any more",
		"cua users purge has no page docs/reference/cli/cua_users_purge.md",
		"the page of cua users differs",
		"the page of the index differs",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the check's report lacks %q:\n%s", want, all)
		}
	}
	for _, d := range diffs {
		if !strings.HasSuffix(d, "run make docs") {
			t.Errorf("%q does not name make docs", d)
		}
	}
	// make docs again: the stale page goes, the new one comes, and it passes.
	if err := clidoc.Write(dir, clidoc.Pages(changed)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cua_version.md")); !os.IsNotExist(err) {
		t.Errorf("the removed command's page is still there: %v", err)
	}
	if diffs, err := clidoc.Check(dir, clidoc.Pages(changed)); err != nil || len(diffs) != 0 {
		t.Fatalf("after rewriting: %v %v", diffs, err)
	}
}

// TestPageOfReplay reads one generated page: usage, the help text's
// description and examples, every flag with its default, the link up.
func TestPageOfReplay(t *testing.T) {
	var page string
	for _, p := range clidoc.Pages(tree()) {
		if p.Name == "cua_replay.md" {
			page = string(p.Body)
		}
	}
	for _, want := range []string{
		"# cua replay\n",
		"## Usage\n\n```text\ncua replay ",
		"Exit codes: 0 SUCCESS or BUSINESS_OUTCOME, 1 FAILED, 2 NEEDS_HUMAN.",
		"$ cua replay examples/capabilities/memberdesk.savings_balance.yaml --input member_id=12345",
		"  -i, --input stringArray",
		"--base-url string",
		`base URL of the application (default "http://127.0.0.1:8811")`,
		"- [cua](cua.md): ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("cua_replay.md lacks %q:\n%s", want, page)
		}
	}
}
