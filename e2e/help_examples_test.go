package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/mockapp"
)

// helpCommands returns the commands of the first example block of
// `cua ARGS --help`, as a shell reads them: "$ " lines joined with their
// "\" continuations, the `cua mockapp &` that starts the app left out.
func helpCommands(t *testing.T, args ...string) []string {
	t.Helper()
	r := runBin(t, nil, append(args, "--help")...)
	_, ex, ok := strings.Cut(r.stdout, "\nExamples:\n")
	if r.code != 0 || !ok {
		t.Fatalf("cua %s --help: exit %d, no examples\n%s", strings.Join(args, " "), r.code, r.stdout)
	}
	var cmds []string
	cont := false
	for _, line := range strings.Split(ex, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case cont:
			cmds[len(cmds)-1] += "\n" + line
		case strings.HasPrefix(line, "$ "):
			cmds = append(cmds, strings.TrimPrefix(line, "$ "))
		case line == "" && len(cmds) > 0:
			return cmds[1:] // the first is `cua mockapp &`
		}
		cont = strings.HasSuffix(line, `\`)
	}
	return cmds[1:]
}

// TestDiscoverHelpExampleRuns runs the first example of `cua discover
// --help` as written, in a shell with the binary on PATH, from a directory
// holding the repository's examples/, against MemberDesk (its address the
// only substitution): the checked-in cassette replays, the capability is
// written under caps/ and its eval replay succeeds.
func TestDiscoverHelpExampleRuns(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	cmds := helpCommands(t, "discover")
	if len(cmds) != 1 || !strings.HasPrefix(cmds[0], "CUA_SECRET_COREBANK_OPERATOR=") || !strings.Contains(cmds[0], "--cassette examples/cassettes/") {
		t.Fatalf("discover --help's first example is not the cassette replay: %q", cmds)
	}
	dir := t.TempDir()
	examplesDir, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(examplesDir, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	line := strings.ReplaceAll(cmds[0], "http://127.0.0.1:8811", b.app.URL()) + " --json"
	sh := exec.Command("sh", "-c", line)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+":"+os.Getenv("PATH"), "CUA_DATA_DIR="+b.dataDir,
		"CUA_LLM_API_KEY=", "OPENAI_API_KEY=", "CUA_SECRET_COREBANK_OPERATOR=", "CUA_SECRET_COREBANK_PASSWORD=")
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	var res struct {
		File string `json:"file"`
		Eval *struct {
			Status  string         `json:"status"`
			Outputs map[string]any `json:"outputs"`
		} `json:"eval"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if res.Eval == nil || res.Eval.Status != "SUCCESS" || res.Eval.Outputs["savings_balance"] != "1234.56" {
		t.Errorf("eval: %+v, want SUCCESS with savings_balance 1234.56", res.Eval)
	}
	if !strings.HasPrefix(res.File, "caps"+string(filepath.Separator)) {
		t.Errorf("capability written to %s, want under caps/", res.File)
	} else if _, err := os.Stat(filepath.Join(dir, res.File)); err != nil {
		t.Errorf("the capability file: %v", err)
	}
}
