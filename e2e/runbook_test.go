package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/store/pgtest"
)

// runbook is the operations runbook whose commands TestRunbook runs.
const runbook = "../docs/how-to/operations.md"

// runbookMark is the first line of a block TestRunbook executes.
const runbookMark = "# runbook-test"

// runbookBlock is one fenced sh block of the runbook.
type runbookBlock struct {
	line int // of the opening fence, 1-based
	text string
	run  bool // its first line is runbookMark
}

// runbookBlocks returns the fenced ```sh blocks of path, in order.
func runbookBlocks(t *testing.T, path string) []runbookBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []runbookBlock
	var cur *runbookBlock
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```sh":
			cur = &runbookBlock{line: i + 1}
		case cur != nil && strings.TrimSpace(l) == "```":
			cur.run = strings.HasPrefix(cur.text, runbookMark+"\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s: the sh block opened at line %d is not closed", path, cur.line)
	}
	return out
}

// TestRunbook keeps docs/how-to/operations.md true. Every `cua` command line of
// every sh block must name a real subcommand and only flags its --help
// lists; the blocks marked "# runbook-test" then run in order, as one bash
// script with the built binary first on PATH, against MemberDesk, a scratch
// data directory and a private PostgreSQL (the move from SQLite and
// pg_dump), and must exit 0 having done what the runbook says they do.
func TestRunbook(t *testing.T) {
	t.Parallel()
	blocks := runbookBlocks(t, runbook)
	// The checker refuses what is not there, or it would prove nothing.
	for _, bad := range []string{"cua catalog add --no-such-flag x", "cua no-such-command", "cua users ada"} {
		if checkCuaCommand(t, bad) == "" {
			t.Fatalf("the command check passes `%s`", bad)
		}
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n")
	ran := 0
	for _, b := range blocks {
		for _, c := range runbookCommands(b.text) {
			if p := checkCuaCommand(t, c); p != "" {
				t.Errorf("%s: block at line %d: `%s`: %s", runbook, b.line, c, p)
			}
		}
		if b.run {
			ran++
			script.WriteString(b.text)
		}
	}
	if ran < 8 {
		t.Fatalf("%d blocks marked %q, want the runbook's sections (at least 8)", ran, runbookMark)
	}
	out, errOut, logs, err := runRunbook(t, script.String())
	if err != nil {
		t.Fatalf("the runbook's script: %v\nstdout:\n%s\nstderr:\n%s\nlogs:\n%s", err, tail(out, 6000), tail(errOut, 6000), logs)
	}
	// The lookup through the SQLite worker, and the one on PostgreSQL.
	if n := strings.Count(out, "completed memberdesk.savings_balance: SUCCESS"); n != 2 {
		t.Errorf("%d lookups ended SUCCESS through cua submit, want 2\nstdout:\n%s", n, tail(out, 6000))
	}
	for _, want := range []string{
		`"submitted_by":"alice"`,           // cua serve took alice's submit
		"serve stopped: ",                  // drained on SIGTERM
		"needs a human (iv-",               // the undeclared dialog handed the run to a person
		"resolved (not landed)",            // and alice resolved it
		"share_ready: true",                // cua verify --key deployment.pub
		"signature: ok",                    //
		"\nok\n",                           // the online SQLite backup's integrity check
		"memberdesk.savings_balance@1.2.0", // listed in the catalog
	} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("the runbook's output lacks %q\nstdout:\n%s\nstderr:\n%s", want, tail(out, 6000), tail(errOut, 3000))
		}
	}
}

// runRunbook runs script with bash in a scratch directory (examples linked
// in) and returns its stdout and stderr, and the tails of the *.log files
// it left (the workers' stderr).
func runRunbook(t *testing.T, script string) (string, string, string, error) {
	t.Helper()
	app, err := mockapp.New(mockapp.Options{Operator: operator, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	pg, err := pgtest.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	if _, err := pg.CreateDatabase(context.Background(), "runbook"); err != nil {
		t.Fatal(err)
	}
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
	env = append(env, "PATH="+filepath.Dir(binPath)+":"+os.Getenv("PATH"), "CUA_DATA_DIR="+filepath.Join(dir, "data"),
		"APP="+app.URL(), "SERVE_ADDR="+freeAddr(t), "PG_URL="+pg.URL("runbook"), "BACKUP="+filepath.Join(dir, "backup"),
		"CUA_SECRET_COREBANK_OPERATOR="+operator, "CUA_SECRET_COREBANK_PASSWORD="+password)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 30 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var logs strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		logs.WriteString("== " + filepath.Base(f) + "\n" + tail(string(data), 3000) + "\n")
	}
	return out.String(), errOut.String(), logs.String(), err
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runbookCommands returns the `cua …` commands of a block: continuation
// lines joined, comments dropped, each pipeline, list and $( … ) part that
// starts with cua (after VAR=value assignments).
func runbookCommands(block string) []string {
	block = strings.ReplaceAll(block, "\\\n", " ")
	var out []string
	split := regexp.MustCompile(`\|\||&&|[|;]|\$\(`)
	for _, l := range strings.Split(block, "\n") {
		for _, part := range split.Split(stripComment(l), -1) {
			f := strings.Fields(part)
			for len(f) > 0 && strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "-") {
				f = f[1:]
			}
			if len(f) > 0 && f[0] == "cua" {
				out = append(out, strings.TrimSuffix(strings.Join(f, " "), ")"))
			}
		}
	}
	return out
}

// stripComment drops a shell comment: a # at the start of a word outside
// quotes.
func stripComment(l string) string {
	var q rune
	for i, r := range l {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}

// helpCache holds `cua … --help` outputs by command path.
var helpCache = map[string]string{}

// cuaHelp returns the help of the command path (no "cua").
func cuaHelp(t *testing.T, path []string) string {
	t.Helper()
	key := strings.Join(path, " ")
	if h, ok := helpCache[key]; ok {
		return h
	}
	r := runBin(t, nil, append(slices.Clone(path), "--help")...)
	h := r.stdout + r.stderr
	if r.code != 0 {
		h = ""
	}
	helpCache[key] = h
	return h
}

// subcommands lists the "Available Commands" of a help text.
func subcommands(help string) []string {
	_, rest, ok := strings.Cut(help, "Available Commands:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

// checkCuaCommand says what is wrong with one `cua …` command line: a
// subcommand path that does not exist, or a flag its help does not list.
func checkCuaCommand(t *testing.T, cmd string) string {
	t.Helper()
	f := strings.Fields(cmd)[1:]
	var path []string
	for len(f) > 0 && slices.Contains(subcommands(cuaHelp(t, path)), f[0]) {
		path, f = append(path, f[0]), f[1:]
	}
	help := cuaHelp(t, path)
	if len(path) == 0 || help == "" {
		return "no such cua command"
	}
	if subs := subcommands(help); len(subs) > 0 && !slices.Contains(path, "help") {
		return "`cua " + strings.Join(path, " ") + "` needs one of its commands " + strings.Join(subs, ", ")
	}
	for _, a := range f {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(name) + `[\s,]`).MatchString(help) {
			return "cua " + strings.Join(path, " ") + " has no flag " + name
		}
	}
	return ""
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
