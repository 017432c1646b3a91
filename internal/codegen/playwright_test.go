package codegen_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// The harness is the npm project in testdata/pw, installed with npm ci
// once per lock file into the user's cache directory (never into the
// repository), and shared by every test of the package.
var harness struct {
	once sync.Once
	dir  string
	err  error
}

func playwrightDir(tb testing.TB) string {
	tb.Helper()
	harness.once.Do(func() { harness.dir, harness.err = installHarness() })
	if harness.err != nil {
		tb.Fatalf("install the Playwright harness (make deps installs node and npm): %v", harness.err)
	}
	return harness.dir
}

func installHarness() (string, error) {
	pkg, err := os.ReadFile("testdata/pw/package.json")
	if err != nil {
		return "", err
	}
	lock, err := os.ReadFile("testdata/pw/package-lock.json")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(pkg, lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "cua", "codegen-pw-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".codegen-pw-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "node_modules")); serr == nil {
			return dir, nil // another test process installed it first
		}
		return "", err
	}
	return dir, nil
}

// report is the part of Playwright's JSON report the tests read.
type report struct {
	Stats struct {
		Expected   int `json:"expected"`
		Unexpected int `json:"unexpected"`
		Flaky      int `json:"flaky"`
		Skipped    int `json:"skipped"`
	} `json:"stats"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
	Suites []suite `json:"suites"`
}

// suite, spec, result and annotation are the parts of a report's tests
// the tests read.
type suite struct {
	Title  string  `json:"title"`
	Suites []suite `json:"suites"`
	Specs  []struct {
		Title string `json:"title"`
		Tests []struct {
			ProjectName string       `json:"projectName"`
			Annotations []annotation `json:"annotations"`
			Results     []result     `json:"results"`
		} `json:"tests"`
	} `json:"specs"`
}

type result struct {
	Status      string       `json:"status"`
	Annotations []annotation `json:"annotations"`
	Errors      []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

type annotation struct {
	Type        string `json:"type"`
	Description string `json:"description"`
}

// results lists every test result of the report with the test's
// annotations, the runtime's included.
func (r report) results() []result {
	var out []result
	var walk func(ss []suite)
	walk = func(ss []suite) {
		for _, s := range ss {
			for _, sp := range s.Specs {
				for _, t := range sp.Tests {
					for _, res := range t.Results {
						res.Annotations = append(slices.Clone(t.Annotations), res.Annotations...)
						out = append(out, res)
					}
				}
			}
			walk(s.Suites)
		}
	}
	walk(r.Suites)
	return out
}

// runPlaywright writes the specs into a run directory inside the harness,
// type-checks them with tsc --strict and runs them with real Playwright,
// one project per base URL; any failing test fails t.
func runPlaywright(t *testing.T, specs map[string][]byte, projects map[string]string, env []string) report {
	t.Helper()
	rep, out, err := playwright(t, specs, projects, env)
	if err != nil || rep.Stats.Unexpected > 0 || len(rep.Errors) > 0 {
		t.Fatalf("playwright failed (%v): %+v\n%s", err, rep.Stats, out)
	}
	return rep
}

// playwright is runPlaywright that leaves the verdict to its caller: it
// returns the report, Playwright's output and its exit error.
func playwright(t *testing.T, specs map[string][]byte, projects map[string]string, env []string) (report, string, error) {
	t.Helper()
	dir := playwrightDir(t)
	run, err := os.MkdirTemp(dir, "run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	for name, data := range specs {
		if err := os.WriteFile(filepath.Join(run, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ps []string
	for name, url := range projects {
		ps = append(ps, fmt.Sprintf("    { name: %s, use: { baseURL: %s } },", codegen.Str(name), codegen.Str(url)))
	}
	config := "import { defineConfig } from '@playwright/test';\n" +
		"export default defineConfig({\n  testDir: '.',\n  timeout: 180000,\n  workers: 2,\n  retries: 0,\n" +
		"  reporter: [['line'], ['json', { outputFile: 'report.json' }]],\n  outputDir: 'test-results',\n" +
		"  projects: [\n" + strings.Join(ps, "\n") + "\n  ],\n});\n"
	if err := os.WriteFile(filepath.Join(run, "playwright.config.ts"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	tsconfig, err := os.ReadFile("testdata/pw/tsconfig.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "tsconfig.json"), tsconfig, 0o644); err != nil {
		t.Fatal(err)
	}
	// Playwright runs the specs in 63 s here, two workers on two cores; a
	// loaded CI machine can take several times that. Only a hang reaches
	// these 10 minutes, or the 3 minute per-test timeout set above.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	// tsc --strict type-checks the specs while Playwright runs them.
	typecheck := make(chan error, 1)
	go func() {
		tsc := exec.CommandContext(ctx, "node", filepath.Join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", run)
		tsc.Dir = run
		if out, err := tsc.CombinedOutput(); err != nil {
			typecheck <- fmt.Errorf("tsc: %v\n%s", err, out)
			return
		}
		typecheck <- nil
	}()
	defer func() {
		if err := <-typecheck; err != nil {
			t.Error(err)
		}
	}()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "node_modules", "@playwright", "test", "cli.js"), "test", "--config", filepath.Join(run, "playwright.config.ts"))
	cmd.Dir = run
	// A short TMPDIR: Chromium's singleton socket path under a subtest's
	// t.TempDir() can pass the 107 bytes a Unix socket path may have.
	tmp, err := os.MkdirTemp("", "cgpw-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + tmp, "CI=1"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("playwright ran %d spec(s) in %v", len(specs), time.Since(start).Round(time.Millisecond))
	data, rerr := os.ReadFile(filepath.Join(run, "report.json"))
	if rerr != nil {
		t.Fatalf("playwright wrote no report (%v): %v\n%s", err, rerr, out.String())
	}
	var rep report
	if jerr := json.Unmarshal(data, &rep); jerr != nil {
		t.Fatalf("report.json: %v", jerr)
	}
	return rep, out.String(), err
}

func loadExample(tb testing.TB, name string) *capability.Loaded {
	tb.Helper()
	l, err := capability.Load(filepath.Join("..", "..", "examples", "capabilities", name+".yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func exampleLibrary(tb testing.TB) *replay.DirLibrary {
	tb.Helper()
	lib, err := replay.LoadDir(filepath.Join("..", "..", "examples", "capabilities"))
	if err != nil {
		tb.Fatal(err)
	}
	return lib
}

func startMemberDesk(t *testing.T, variant string) string {
	t.Helper()
	s, err := mockapp.New(mockapp.Options{Addr: "127.0.0.1:0", Variant: variant})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.URL()
}

// TestGeneratedSpecsRunGreen generates the spec of every example
// capability and of the hostile-strings capability, and runs them all with
// real Playwright and Debian's Chromium against MemberDesk variants a and
// b: every case passes, business outcomes included.
func TestGeneratedSpecsRunGreen(t *testing.T) {
	lib := exampleLibrary(t)
	args := browser.Flags()
	specs := map[string][]byte{}
	cases := 0
	for _, tc := range []struct {
		file  string
		l     *capability.Loaded
		cases []codegen.Case
		named bool
	}{
		{file: "lookup.spec.ts", l: loadExample(t, "memberdesk.savings_balance"), cases: codegen.ReferenceCases},
		// No frame titles: the frames are found by the names the scopes use.
		{file: "named.spec.ts", l: loadExample(t, "memberdesk.savings_balance"), cases: codegen.ReferenceCases, named: true},
		{file: "transfer.spec.ts", l: loadExample(t, "memberdesk.transfer_funds")},
		{file: "signon.spec.ts", l: loadExample(t, "corebank.auth.sign_on")},
		{file: "quick.spec.ts", l: loadExample(t, "memberdesk.savings_balance_quick")},
		{file: "hostile.spec.ts", l: mustLoad(t, "testdata/hostile.yaml")},
		{file: "shaped.spec.ts", l: mustLoad(t, "testdata/shaped.yaml")},
	} {
		titles := codegen.MemberDeskFrames
		if tc.named {
			titles = nil
		}
		spec, err := codegen.Generate(tc.l, codegen.Options{Cases: tc.cases, FrameTitles: titles, BrowserArgs: args, Library: lib})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		checkSafe(t, tc.file, spec)
		specs[tc.file] = spec
		cases += max(len(tc.cases), 1)
	}
	projects := map[string]string{"variant-a": startMemberDesk(t, mockapp.VariantA), "variant-b": startMemberDesk(t, mockapp.VariantB)}
	// The transfer's gate is released and its irreversible steps allowed:
	// every spec runs to its end.
	rep := runPlaywright(t, specs, projects, append(secretsEnv(), releaseEnv(codegen.Guards(loadExample(t, "memberdesk.transfer_funds"), lib))...))
	if want := cases * len(projects); rep.Stats.Expected != want || rep.Stats.Skipped != 0 || rep.Stats.Flaky != 0 {
		t.Fatalf("stats %+v, want %d expected tests and none skipped or flaky", rep.Stats, want)
	}
}

func mustLoad(tb testing.TB, path string) *capability.Loaded {
	tb.Helper()
	l, err := capability.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// checkSafe holds a spec to the generator's promises: no CSS or XPath
// locator, no template literal, no raw line separator, nothing that closes
// a script element or opens an HTML comment, no secret value.
func checkSafe(t *testing.T, name string, spec []byte) {
	t.Helper()
	s := string(spec)
	for _, bad := range []string{"`", "\u2028", "\u2029", "</script", "</SCRIPT", "<!--", ".locator(", "frameLocator(", "xpath=", "css=", "a#nav-search", "input#member-q", mockapp.DefaultPassword, mockapp.DefaultOperator} {
		if strings.Contains(s, bad) {
			t.Errorf("%s holds %q", name, bad)
		}
	}
}

func secretsEnv() []string {
	return []string{
		"CUA_SECRET_COREBANK_OPERATOR=" + mockapp.DefaultOperator,
		"CUA_SECRET_COREBANK_PASSWORD=" + mockapp.DefaultPassword,
	}
}

// releaseEnv releases every gate of gs and, when one is irreversible,
// allows the irreversible steps.
func releaseEnv(gs []codegen.Guard) []string {
	var gates []string
	irreversible := false
	for _, g := range gs {
		if g.Gate {
			gates = append(gates, g.Step)
		}
		irreversible = irreversible || g.Irreversible()
	}
	var env []string
	if len(gates) > 0 {
		env = append(env, codegen.ReleaseGateEnv+"="+strings.Join(gates, ","))
	}
	if irreversible {
		env = append(env, codegen.AllowIrreversibleEnv+"=1")
	}
	return env
}

// TestTransferSpecKeepsGates runs the transfer's generated spec against
// MemberDesk four times, counting the app's ledger entries (its own record
// of committed transfers, read from the server) around each run. With no
// release in the environment, with only the gate released, and with only
// irreversible steps allowed, the test fails before the step it may not
// perform, saying so and naming what to set, and the ledger is unchanged;
// with the gate released and irreversible steps allowed, it passes and
// posts exactly one transfer. The gated step is read from the example.
func TestTransferSpecKeepsGates(t *testing.T) {
	l := loadExample(t, "memberdesk.transfer_funds")
	lib := exampleLibrary(t)
	var gate string
	var irreversible []string
	for _, st := range l.Capability.Steps {
		if st.Gate && gate == "" {
			gate = st.ID
		}
		if st.Risk == domain.RiskIrreversible {
			irreversible = append(irreversible, st.ID)
		}
	}
	if gate == "" || len(irreversible) == 0 || !slices.Contains(irreversible, gate) {
		t.Fatalf("%s: want a gated irreversible step (gate %q, irreversible %v)", l.Capability.Ref(), gate, irreversible)
	}
	spec, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, BrowserArgs: browser.Flags(), Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "transfer.spec.ts", spec)
	url := startMemberDesk(t, mockapp.VariantA)
	app := mockapp.NewClient(url, nil)
	ledger := func() int {
		t.Helper()
		entries, err := app.Ledger(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	specs := map[string][]byte{"transfer.spec.ts": spec}
	projects := map[string]string{"memberdesk": url}
	release := codegen.ReleaseGateEnv + "=" + gate
	allow := codegen.AllowIrreversibleEnv + "=1"
	for _, tc := range []struct {
		name    string
		env     []string
		stopAt  string // the step the test stops before; "" runs to the end
		because string
	}{
		{name: "nothing released", stopAt: gate, because: "it is gated for human review (GATE_REACHED) and CUA_RELEASE_GATE does not name " + gate},
		{name: "gate released only", env: []string{release}, stopAt: gate, because: "it is irreversible and CUA_ALLOW_IRREVERSIBLE is not 1"},
		{name: "irreversible allowed only", env: []string{allow, codegen.ReleaseGateEnv + "=another_step, "}, stopAt: gate, because: "CUA_RELEASE_GATE does not name " + gate},
		{name: "gate released and irreversible allowed", env: []string{codegen.ReleaseGateEnv + "=other, " + gate, allow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ledger()
			rep, out, err := playwright(t, specs, projects, append(secretsEnv(), tc.env...))
			after := ledger()
			results := rep.results()
			if len(results) != 1 {
				t.Fatalf("%d results, want 1: %+v\n%s", len(results), rep.Stats, out)
			}
			res := results[0]
			effects := map[string]bool{}
			for _, a := range res.Annotations {
				if a.Type == "effect" {
					effects[strings.Fields(strings.TrimPrefix(a.Description, "step "))[0]] = true
				}
			}
			if tc.stopAt == "" {
				if err != nil || rep.Stats.Expected != 1 || res.Status != "passed" {
					t.Fatalf("the released transfer did not pass (%v): %+v\n%s", err, rep.Stats, out)
				}
				if after != before+1 {
					t.Errorf("ledger went from %d to %d entries, want exactly one transfer posted", before, after)
				}
				for _, id := range irreversible {
					if !effects[id] {
						t.Errorf("no effect annotation for irreversible step %s: %+v", id, res.Annotations)
					}
				}
				return
			}
			if after != before {
				t.Errorf("ledger went from %d to %d entries: the spec posted a transfer without its release", before, after)
			}
			if err == nil || rep.Stats.Unexpected != 1 || res.Status != "failed" || len(res.Errors) == 0 {
				t.Fatalf("the unreleased transfer did not fail (%v): %+v\n%s", err, rep.Stats, out)
			}
			msg := res.Errors[0].Message
			t.Logf("the test stopped: %s", msg)
			for _, want := range []string{"stopped before step " + tc.stopAt, tc.because, "nothing of it was sent", "set " + release, allow} {
				if !strings.Contains(msg, want) {
					t.Errorf("the failure does not say %q:\n%s", want, msg)
				}
			}
			stopped := false
			for _, a := range res.Annotations {
				stopped = stopped || (a.Type == "stopped" && strings.Contains(a.Description, "stopped before step "+tc.stopAt))
			}
			if !stopped {
				t.Errorf("no 'stopped' annotation naming step %s: %+v", tc.stopAt, res.Annotations)
			}
			for _, id := range irreversible {
				if effects[id] {
					t.Errorf("an effect annotation for step %s, which the test must not have sent", id)
				}
			}
		})
	}
}
