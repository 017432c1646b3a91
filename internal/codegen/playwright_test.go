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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/codegen"
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
}

// runPlaywright writes the specs into a run directory inside the harness,
// type-checks them with tsc --strict and runs them with real Playwright,
// one project per base URL.
func runPlaywright(t *testing.T, specs map[string][]byte, projects map[string]string, env []string) report {
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
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + t.TempDir(), "CI=1"}, env...)
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
	if err != nil || rep.Stats.Unexpected > 0 || len(rep.Errors) > 0 {
		t.Fatalf("playwright failed (%v): %+v\n%s", err, rep.Stats, out.String())
	}
	return rep
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
	}{
		{file: "lookup.spec.ts", l: loadExample(t, "memberdesk.savings_balance"), cases: codegen.ReferenceCases},
		{file: "transfer.spec.ts", l: loadExample(t, "memberdesk.transfer_funds")},
		{file: "signon.spec.ts", l: loadExample(t, "corebank.auth.sign_on")},
		{file: "quick.spec.ts", l: loadExample(t, "memberdesk.savings_balance_quick")},
		{file: "hostile.spec.ts", l: mustLoad(t, "testdata/hostile.yaml")},
	} {
		spec, err := codegen.Generate(tc.l, codegen.Options{Cases: tc.cases, FrameTitles: codegen.MemberDeskFrames, BrowserArgs: args, Library: lib})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		checkSafe(t, tc.file, spec)
		specs[tc.file] = spec
		cases += max(len(tc.cases), 1)
	}
	projects := map[string]string{"variant-a": startMemberDesk(t, mockapp.VariantA), "variant-b": startMemberDesk(t, mockapp.VariantB)}
	rep := runPlaywright(t, specs, projects, []string{
		"CUA_SECRET_COREBANK_OPERATOR=" + mockapp.DefaultOperator,
		"CUA_SECRET_COREBANK_PASSWORD=" + mockapp.DefaultPassword,
	})
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
