package archtest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRealTree holds this module to DESIGN.md's package rules.
func TestRealTree(t *testing.T) {
	t.Parallel()
	got, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		t.Error(v)
	}
}

func TestViolatingFixture(t *testing.T) {
	t.Parallel()
	got, err := Check(filepath.Join("testdata", "violating"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		pkg    string
		rule   string
		detail string // a substring of the violation's Detail
	}{
		{"domain imports os", "internal/domain", RulePureDomain, "imports os (internal/domain/domain.go:5)"},
		{"domain calls time.Now", "internal/domain", RulePureDomain, "time.Now at internal/domain/domain.go:15"},
		{"domain sleeps through an alias", "internal/domain", RulePureDomain, "time.Sleep at internal/domain/wait.go:6"},
		{"domain imports log", "internal/domain", RulePureDomain, "imports log (internal/domain/print.go:5)"},
		{"domain prints", "internal/domain", RulePureDomain, "fmt.Println at internal/domain/print.go:10"},
		{"runtime imports model", "internal/runtime", RuleImport, "imports internal/model"},
		{"replay reaches model through runtime", "internal/replay", RuleNoModel, "internal/replay -> internal/runtime -> internal/model"},
		{"replay reaches an SDK through perception", "internal/replay", RuleNoModel, "internal/replay -> internal/perception -> github.com/openai/openai-go"},
		{"heal imports model", "internal/heal", RuleImport, "imports internal/model"},
		{"heal reaches model", "internal/heal", RuleNoModel, "internal/heal -> internal/model"},
		{"replay dispatches", "internal/replay", RuleDispatch, "s.Dispatch at internal/replay/replay.go:15"},
		{"adapter imports a sibling adapter", "internal/surface/sim", RuleImport, "imports internal/surface/browser"},
		{"mockapp imports the module", "internal/mockapp", RuleImport, "imports internal/domain"},
		{"mockapp imports a third-party module", "internal/mockapp", RuleStdlibOnly, "imports github.com/openai/openai-go"},
		{"main skips cli", "cmd/cua", RuleImport, "imports internal/domain"},
		{"package missing from the table", "internal/extra", RuleUnmapped, "internal/extra"},
		{"package without a doc comment", "internal/codegen", RulePackageDoc, "no package doc comment"},
		{"cli reads snapshots itself", "internal/cli", RuleImport, "imports internal/perception (internal/cli/cli.go:4)"},
		{"a command past its line budget", "internal/cmd/fat", RuleLineBudget, "405 lines of non-test Go; the budget is 400"},
		{"a function past the limit", "internal/extra", RuleFuncLength, "func Long is 129 lines (internal/extra/extra.go:5)"},
		{"a file read whole", "internal/extra", RuleBoundedRd, "uses os.ReadFile at internal/extra/read.go:10"},
		{"a stream read whole", "internal/extra", RuleBoundedRd, "uses io.ReadAll at internal/extra/read.go:13"},
		{"os.Open as a value", "internal/extra", RuleBoundedRd, "uses os.Open at internal/extra/read.go:19"},
		{"ioutil under another name", "internal/extra", RuleBoundedRd, "uses ioutil.ReadFile at internal/extra/read.go:22"},
	}
	matches := func(v Violation, pkg, rule, detail string) bool {
		return v.Pkg == pkg && v.Rule == rule && strings.Contains(v.Detail, detail)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !slices.ContainsFunc(got, func(v Violation) bool { return matches(v, tt.pkg, tt.rule, tt.detail) }) {
				t.Errorf("no %s violation in %s containing %q; got:\n%s", tt.rule, tt.pkg, tt.detail, list(got))
			}
		})
	}
	t.Run("nothing else", func(t *testing.T) {
		t.Parallel()
		for _, v := range got {
			if !slices.ContainsFunc(tests, func(tt struct{ name, pkg, rule, detail string }) bool {
				return matches(v, tt.pkg, tt.rule, tt.detail)
			}) {
				t.Errorf("unexpected violation: %s", v)
			}
		}
	})
}

func TestCleanFixture(t *testing.T) {
	t.Parallel()
	got, err := Check(filepath.Join("testdata", "clean"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		t.Errorf("unexpected violation: %s", v)
	}
}

func TestCheckNoModule(t *testing.T) {
	t.Parallel()
	if _, err := Check(t.TempDir()); err == nil {
		t.Fatal("Check of a directory without go.mod succeeded")
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		from, to string
		want     bool
	}{
		{"row entry", "internal/targeting", "internal/perception", true},
		{"not in row", "internal/perception", "internal/targeting", false},
		{"domain imports nothing", "internal/domain", "internal/capability", false},
		{"domain's own subpackage", "internal/domain", "internal/domain/id", true},
		{"adapter imports its port", "internal/surface/browser", "internal/surface", true},
		{"adapter inherits its port's row", "internal/surface/browser", "internal/policy", true},
		{"adapter's helper imports its adapter and port", "internal/surface/browser/cdp", "internal/surface/browser", true},
		{"adapter's helper imports the port", "internal/surface/browser/cdp", "internal/surface", true},
		{"sibling adapters", "internal/surface/sim", "internal/surface/browser", false},
		{"conformance suite imports an adapter", "internal/surface/surfacetest", "internal/surface/sim", false},
		{"model adapters", "internal/model/openai", "internal/model/cassette", false},
		{"port imports an adapter", "internal/store", "internal/store/sqlite", true}, // a descendant; a cycle if it is really an adapter
		{"adapter's own subpackage", "internal/store/sqlite", "internal/store/sqlite/migration", true},
		{"allowed port, not its adapter", "internal/replay", "internal/surface/sim", false},
		{"replay uses runtime", "internal/replay", "internal/runtime", true},
		{"replay never model", "internal/replay", "internal/model", false},
		{"replay never agent", "internal/replay", "internal/agent", false},
		{"agent uses model", "internal/agent", "internal/model", true},
		{"agent never a model adapter", "internal/agent", "internal/model/openai", false},
		{"runtime emits evidence", "internal/runtime", "internal/evidence", true},
		{"runtime checks leases", "internal/runtime", "internal/hitl", true},
		{"runtime never replay", "internal/runtime", "internal/replay", false},
		{"console uses hitl and runtime", "internal/console", "internal/runtime", true},
		{"console never model", "internal/console", "internal/model", false},
		{"observer reads domain", "internal/observer", "internal/domain", true},
		{"cli imports only commands", "internal/cli", "internal/surface/browser", false},
		{"cli assembles commands", "internal/cli", "internal/cmd/replay", true},
		{"command inherits", "internal/cmd/run", "internal/store/sqlite", true},
		{"command never a surface adapter", "internal/cmd/replay", "internal/surface/browser", false},
		{"command opens surfaces through launch", "internal/cmd/replay", "internal/launch", true},
		{"main imports cli", "cmd/cua", "internal/cli", true},
		{"main imports only cli", "cmd/cua", "internal/domain", false},
		{"schema is a leaf", "internal/capability", "schema", true},
		{"domain never schema", "internal/domain", "schema", false},
		{"mockapp imports nothing", "internal/mockapp", "internal/domain", false},
		{"bench imports everything", "bench", "internal/replay", true},
		{"e2e imports everything", "e2e", "internal/mockapp", true},
		{"every row reads through fsx", "internal/evidence", "internal/fsx", true},
		{"domain never reads", "internal/domain", "internal/fsx", false},
		{"fsx imports nothing", "internal/fsx", "internal/domain", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			row, ok := rowFor(tt.from)
			if !ok {
				t.Fatalf("no row for %s", tt.from)
			}
			if got := allowed(tt.from, tt.to, row); got != tt.want {
				t.Errorf("allowed(%s -> %s) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
}

// TestRules checks the table itself: every row of DESIGN.md is there once,
// and every entry names a row.
func TestRules(t *testing.T) {
	t.Parallel()
	rows := map[string]bool{}
	for _, r := range Rules {
		if rows[r.Pkg] {
			t.Errorf("row %s appears twice", r.Pkg)
		}
		rows[r.Pkg] = true
	}
	for _, r := range Rules {
		for _, m := range r.MayImport {
			if m != Everything && !rows[strings.TrimSuffix(m, "/...")] {
				t.Errorf("row %s allows %s, which is not a row", r.Pkg, m)
			}
			if m == r.Pkg {
				t.Errorf("row %s allows itself", r.Pkg)
			}
		}
	}
	for _, pkg := range []string{
		"internal/domain", "internal/capability", "internal/perception", "internal/targeting",
		"internal/redact", "internal/policy", "internal/surface", "internal/runtime", "internal/replay",
		"internal/model", "internal/agent", "internal/recorder", "internal/evidence", "internal/store",
		"internal/catalog", "internal/hitl", "internal/console", "internal/observer", "internal/codegen",
		"internal/receipt", "internal/mockapp", "internal/cli", "internal/archtest",
		"internal/pipeline", "internal/jobs", "internal/server", "internal/demo",
		"internal/launch", "internal/secret", "internal/report", "internal/statewire",
		"cmd/cua", "schema", "bench", "e2e",
	} {
		if !rows[pkg] {
			t.Errorf("no row for %s", pkg)
		}
	}
	for _, pkg := range []string{
		"internal/surface/browser", "internal/surface/sim", "internal/surface/state", "internal/surface/surfacetest",
		"internal/model/openai", "internal/model/cassette", "internal/store/sqlite", "internal/store/postgres",
	} {
		if _, ok := rowFor(pkg); !ok {
			t.Errorf("no inherited row for %s", pkg)
		}
	}
	if _, ok := rowFor("internal/extra"); ok {
		t.Error("internal/extra has a row")
	}
}

func list(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\t" + v.String() + "\n")
	}
	return b.String()
}
