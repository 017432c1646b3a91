package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// docsRoot is the documentation tree, from this package.
const docsRoot = "../docs"

// illustrative is the info string of a fenced shell block no test runs:
// TestDocsShellBlocks still checks every cua command in it against --help.
const illustrative = "console illustrative"

// docsRunBy names, for each page (relative to docs/) whose ```sh blocks a
// test runs, the test that runs them. A ```sh block anywhere else in the
// tutorial or the how-tos fails TestDocsShellBlocks.
var docsRunBy = map[string]string{
	"tutorial/first-lookup.md": "TestTutorial",
	"how-to/operations.md":     "TestRunbook", // its "# runbook-test" blocks run; the others are checked
	"how-to/by-hand.md":        "TestHowTos",
	"how-to/discover.md":       "TestHowTos",
	"how-to/codegen.md":        "TestHowTos",
	"how-to/mcp.md":            "TestHowTos",
	"tutorial/record.md":       "TestRecordTutorial",
}

// docBlock is one fenced block of a Markdown page.
type docBlock struct {
	line int    // of the opening fence, 1-based
	info string // the fence's info string ("sh", "console illustrative", "")
	text string
}

// docBlocks returns the fenced blocks of path, in order.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	var cur *docBlock
	for i, l := range strings.Split(string(data), "\n") {
		trim := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trim, "```"):
			cur = &docBlock{line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(trim, "```"))}
		case cur != nil && trim == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s: the block opened at line %d is not closed", path, cur.line)
	}
	return out
}

// quotedArgs matches a quoted shell word, which is one argument however
// many dashes it holds ("mousepad --disable-server").
var quotedArgs = regexp.MustCompile(`"[^"\n]*"|'[^'\n]*'`)

// shellBlock says whether a fence's info string marks shell commands.
func shellBlock(info string) bool {
	lang, _, _ := strings.Cut(info, " ")
	switch lang {
	case "sh", "bash", "shell", "console", "zsh":
		return true
	}
	return false
}

// docPages lists the Markdown pages under docs/<dirs>, relative to docs/.
func docPages(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(docsRoot, d, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(docsRoot, f)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out
}

// TestDocsShellBlocks (issue 30 item 2) keeps the tutorial and how-tos
// honest: every shell block is either run by the test docsRunBy names
// (```sh in such a page) or marked ```console illustrative, and every cua
// command line in an illustrative block names a real command and only
// flags its --help lists. An unmarked or mislabeled block fails, naming
// the page, the line and the two ways out.
func TestDocsShellBlocks(t *testing.T) {
	t.Parallel()
	pages := docPages(t, "tutorial", "how-to")
	if len(pages) < 5 {
		t.Fatalf("%d pages under docs/tutorial and docs/how-to, want the tutorial and the how-tos", len(pages))
	}
	checked := 0
	for _, page := range pages {
		for _, b := range docBlocks(t, filepath.Join(docsRoot, page)) {
			if !shellBlock(b.info) {
				continue
			}
			switch {
			case b.info == illustrative:
				for _, c := range runbookCommands(quotedArgs.ReplaceAllString(b.text, "ARG")) {
					checked++
					if p := checkCuaCommand(t, c); p != "" {
						t.Errorf("docs/%s:%d: `%s`: %s", page, b.line, c, p)
					}
				}
			case b.info == "sh" && docsRunBy[page] != "":
				// run by docsRunBy[page]
			default:
				t.Errorf("docs/%s:%d: a ```%s block no test runs: make it ```sh in a page a test runs "+
					"(docsRunBy in e2e/docs_test.go) or mark it ```%s", page, b.line, b.info, illustrative)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no illustrative cua command was checked")
	}
}

// TestTutorial runs docs/tutorial/first-lookup.md: its ```sh blocks, in
// order, as one bash script with the built binary first on PATH in a
// scratch directory, against the cua mockapp the page starts. The page
// must reach what it promises: a replayed lookup, an approval earned from
// five evals, an unattended run under it, a batch of four rows done, and
// a share-ready bundle.
func TestTutorial(t *testing.T) {
	t.Parallel()
	out, errOut, err := runDocScript(t, docScript(t, "tutorial/first-lookup.md"), "")
	if err != nil {
		t.Fatalf("the tutorial's script: %v\nstdout:\n%s\nstderr:\n%s", err, tail(out, 6000), tail(errOut, 4000))
	}
	for _, want := range []string{
		"ok   examples/capabilities/memberdesk.savings_balance.yaml", // capability validate
		"SUCCESS  memberdesk.savings_balance@1.2.0",
		"savings_balance = 1234.56",
		"outcome      member_not_found",
		"INPUT_INVALID: invalid input: member_id: does not match pattern [0-9]{5}",
		"exit 1",
		"added memberdesk.savings_balance@1.2.0",
		"approved memberdesk.savings_balance@1.2.0",
		"savings_balance = 0.00", // the unattended run of 23456
		"4 rows: 4 done, 0 failed, 0 needs-human",
		`"outcome":"no_savings_account"`,
		"share_ready: true",
		"signature: ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the tutorial's output lacks %q\nstdout:\n%s\nstderr:\n%s", want, tail(out, 6000), tail(errOut, 3000))
		}
	}
	if n := strings.Count(out, "SUCCESS  memberdesk.savings_balance@1.2.0"); n < 7 {
		t.Errorf("%d lookups ended SUCCESS, want 7 (one replay, five evals, one unattended)", n)
	}
}

// howToPrelude starts what every how-to assumes (tutorial step 2):
// MemberDesk on its default address and the sign-on's secrets.
const howToPrelude = `cua mockapp --addr 127.0.0.1:8811 > mockapp.log 2>&1 &
until curl -sf http://127.0.0.1:8811/_control/state > /dev/null; do sleep 0.2; done
export CUA_SECRET_COREBANK_OPERATOR=OP1001 CUA_SECRET_COREBANK_PASSWORD=teller-pass-1
`

// TestHowTos runs the how-tos docsRunBy gives it, each as one script on
// the prelude above in its own scratch directory, and checks each reached
// its end.
func TestHowTos(t *testing.T) {
	t.Parallel()
	wants := map[string][]string{
		"how-to/by-hand.md":  {"sealed", "SUCCESS  memberdesk.member_status@1.0.0", "status = Active"},
		"how-to/discover.md": {"eval run   SUCCESS", "sealed     sha256:"},
		"how-to/codegen.md":  {`frame(page, "Workspace")`, `getByRole("link", { name: "Member Search"`},
		"how-to/mcp.md":      {`"name"`, "memberdesk_savings_balance"},
	}
	for page, want := range wants {
		if docsRunBy[page] != "TestHowTos" {
			t.Fatalf("docsRunBy does not give %s to TestHowTos", page)
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			out, errOut, err := runDocScript(t, docScript(t, page), howToPrelude)
			if err != nil {
				t.Fatalf("docs/%s: %v\nstdout:\n%s\nstderr:\n%s", page, err, tail(out, 6000), tail(errOut, 4000))
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("docs/%s: the output lacks %q\nstdout:\n%s\nstderr:\n%s", page, w, tail(out, 6000), tail(errOut, 3000))
				}
			}
		})
	}
}

// docScript is the ```sh blocks of a page, joined in order.
func docScript(t *testing.T, page string) string {
	t.Helper()
	var b strings.Builder
	n := 0
	for _, blk := range docBlocks(t, filepath.Join(docsRoot, page)) {
		if blk.info == "sh" {
			n++
			b.WriteString(blk.text)
		}
	}
	if n == 0 {
		t.Fatalf("docs/%s has no ```sh block", page)
	}
	return b.String()
}

// runDocScript runs prelude and script with bash in a scratch directory
// (examples linked in, the built binary first on PATH, no CUA_ variable of
// this process) and returns stdout and stderr. Pages use MemberDesk's
// default address, 127.0.0.1:8811; so that tests running at once never
// share it, the script runs in a network namespace of its own (unshare,
// root) with only loopback, where cua, Chromium and MemberDesk all live.
func runDocScript(t *testing.T, script, prelude string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUA_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+filepath.Dir(binPath)+":"+os.Getenv("PATH"))
	full := "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n" + prelude + script
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", "bash", "-c", "ip link set lo up && bash -c \"$0\"", full)
	if os.Geteuid() != 0 {
		t.Fatal("the docs' scripts run in a network namespace of their own (unshare --net), which needs root")
	}
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 30 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks (issue 30 item 3) keeps the front door and the docs tree
// whole: README.md is under 200 lines; no page points outside the
// repository (../shared/); every relative link of README.md and of every
// page under docs/ names a file or directory that exists.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n >= 200 {
		t.Errorf("README.md has %d lines, want under 200: move detail into docs/", n)
	}
	pages := []string{"../README.md"}
	err = filepath.Walk(docsRoot, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "shared/") {
			t.Errorf("%s points to shared/, which is outside the repository", p)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				t.Errorf("%s: link %s: %v", p, m[1], err)
			}
		}
	}
	if links < 50 {
		t.Errorf("%d relative links checked, want the docs tree's (at least 50)", links)
	}
}
