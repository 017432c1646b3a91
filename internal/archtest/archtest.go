// Package archtest checks DESIGN.md's package rules against the real import
// graph of a module, as read from `go list -deps -json ./...`.
//
// [Check] enforces the package table ([Rules]) and invariants 1 (replay never
// reaches a model), 2 (only runtime dispatches to a surface) and 10 (domain is
// pure), and fails on a package that is missing from the table or has no
// package doc comment. It is used only by this package's tests; its non-test
// code imports nothing but the standard library.
//
// Only non-test files are held to the rules: a package's tests may import
// what they need (a conformance suite, a fake, the clock).
package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Rule ids of a [Violation].
const (
	RuleImport     = "import-rule"         // an import the package's row does not allow
	RuleNoModel    = "no-model-in-replay"  // invariant 1
	RulePureDomain = "pure-domain"         // invariant 10
	RuleDispatch   = "dispatch-chokepoint" // invariant 2
	RuleUnmapped   = "unmapped-package"    // a package missing from the table
	RulePackageDoc = "package-doc"         // no "// Package x ..." comment
	RuleStdlibOnly = "stdlib-only"         // a non-standard import in a stdlib-only tree
	RuleLoadError  = "load-error"          // a package or file the checker could not read
	RuleFuncLength = "func-length"         // a function in internal/ longer than MaxFuncLines
	RuleLineBudget = "line-budget"         // a package over its LineBudgets entry
	RuleBoundedRd  = "bounded-read"        // invariant 22: a file read outside ReaderPkg
)

// MaxFuncLines is the longest a function in internal/ may be, counted from
// its func keyword to its closing brace, less the lines of table data in it
// (slice and map literals of three or more elements).
const MaxFuncLines = 120

// FuncLengthTree is the tree held to [MaxFuncLines], test files included.
const FuncLengthTree = "internal"

// moduleRootRelDir is the module-relative path of the module's root package.
const moduleRootRelDir = "."

// Violation is one broken rule.
type Violation struct {
	Pkg    string // module-relative package path ("." for the module root)
	Rule   string // one of the Rule* ids
	Detail string // what is wrong, naming the import or file:line
}

// String formats v as "pkg: rule: detail".
func (v Violation) String() string {
	return v.Pkg + ": " + v.Rule + ": " + v.Detail
}

// Check lists the packages of the module rooted at moduleDir with the go
// tool and returns every violation of the rules, sorted by package, rule and
// detail. The table is module-relative, so any module path works.
//
// It returns an error only when the go tool cannot list the module; a package
// that fails to load or a file that fails to parse is a [RuleLoadError]
// violation. A package the table names but the module lacks is not a
// violation. The go tool runs with GOWORK=off and an empty GOFLAGS.
func Check(moduleDir string) ([]Violation, error) {
	dir, err := filepath.Abs(moduleDir)
	if err != nil {
		return nil, fmt.Errorf("module dir: %w", err)
	}
	var mod struct{ Path, Dir string }
	out, err := goTool(dir, "list", "-m", "-json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, fmt.Errorf("decode go list -m: %w", err)
	}
	if mod.Path == "" || mod.Dir == "" {
		return nil, fmt.Errorf("no main module in %s", dir)
	}
	out, err = goTool(mod.Dir, "list", "-e", "-deps", "-json", "./...")
	if err != nil {
		return nil, err
	}
	c := &checker{
		mod:    mod.Path,
		dir:    mod.Dir,
		pkgs:   map[string]*goPackage{},
		fset:   token.NewFileSet(),
		parsed: map[string]*ast.File{},
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := new(goPackage)
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		c.pkgs[p.ImportPath] = p
		if rel, ok := c.rel(p.ImportPath); ok && !p.DepOnly {
			p.rel = rel
			c.own = append(c.own, p)
		}
	}
	slices.SortFunc(c.own, func(a, b *goPackage) int { return strings.Compare(a.rel, b.rel) })
	for _, p := range c.own {
		c.checkPackage(p)
	}
	slices.SortFunc(c.out, func(a, b Violation) int {
		if n := strings.Compare(a.Pkg, b.Pkg); n != 0 {
			return n
		}
		if n := strings.Compare(a.Rule, b.Rule); n != 0 {
			return n
		}
		return strings.Compare(a.Detail, b.Detail)
	})
	return slices.Compact(c.out), nil
}

// goTool runs the go command in dir and returns its standard output.
func goTool(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// goPackage is the part of `go list -json` output the checker reads.
type goPackage struct {
	ImportPath   string
	Dir          string
	Name         string
	Doc          string
	Standard     bool
	DepOnly      bool
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	Deps         []string
	Error        *struct{ Err string }

	rel string // module-relative path, for the module's own packages
}

// sourceFiles returns p's non-test Go files, as absolute paths.
func (p *goPackage) sourceFiles() []string {
	var files []string
	for _, f := range join(p.GoFiles, p.CgoFiles) {
		files = append(files, filepath.Join(p.Dir, f))
	}
	return files
}

type checker struct {
	mod    string                // module path
	dir    string                // module root directory
	pkgs   map[string]*goPackage // every listed package, by import path
	own    []*goPackage          // the module's packages matched by ./...
	fset   *token.FileSet
	parsed map[string]*ast.File // by absolute file name
	out    []Violation
}

func (c *checker) report(p *goPackage, rule, format string, args ...any) {
	c.out = append(c.out, Violation{Pkg: p.rel, Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

// rel returns the module-relative path of importPath, and whether it is in
// the module.
func (c *checker) rel(importPath string) (string, bool) {
	if importPath == c.mod {
		return moduleRootRelDir, true
	}
	if r, ok := strings.CutPrefix(importPath, c.mod+"/"); ok {
		return r, true
	}
	return "", false
}

// short names importPath module-relatively when it is in the module.
func (c *checker) short(importPath string) string {
	if r, ok := c.rel(importPath); ok {
		return r
	}
	return importPath
}

func (c *checker) checkPackage(p *goPackage) {
	if p.Error != nil {
		c.report(p, RuleLoadError, "go list: %s", oneLine(p.Error.Err))
	}
	c.checkDoc(p)
	row, ok := rowFor(p.rel)
	if !ok {
		c.report(p, RuleUnmapped, "%s is not in archtest.Rules (DESIGN.md's package table); add a row or move it under one", p.rel)
	} else {
		c.checkImports(p, row)
	}
	if inAny(p.rel, StdlibOnly) {
		c.checkStdlibOnly(p)
	}
	if inAny(p.rel, NoModelTrees) {
		c.checkNoModel(p)
	}
	if within(p.rel, DomainTree) {
		c.checkPureDomain(p)
	}
	if !inAny(p.rel, DispatchTrees) {
		c.checkDispatch(p)
	}
	if within(p.rel, FuncLengthTree) {
		c.checkFuncLength(p)
	}
	c.checkLineBudget(p)
	if inAny(p.rel, BoundedReadTrees) && !within(p.rel, ReaderPkg) {
		c.checkBoundedRead(p)
	}
}

// unboundedReads are the reads rule bounded-read refuses, by import path
// and function; io.ReadAll is refused unless its argument is an
// io.LimitReader call.
var unboundedReads = map[string][]string{
	"os":        {"ReadFile", "Open"},
	"io":        {"ReadAll"},
	"io/ioutil": {"ReadFile", "ReadAll"},
}

// checkBoundedRead reports each use of a function that reads a file whole
// or opens one bare in p's non-test files (invariant 22), unless
// [UnboundedReads] allows it where it is.
func (c *checker) checkBoundedRead(p *goPackage) {
	for _, name := range p.sourceFiles() {
		f := c.parse(p, name)
		if f == nil {
			continue
		}
		local := map[string]string{} // name imported under -> import path
		for _, spec := range f.Imports {
			ip := importPath(spec)
			if _, ok := unboundedReads[ip]; !ok {
				continue
			}
			n := path.Base(ip)
			if spec.Name != nil {
				n = spec.Name.Name
			}
			local[n] = ip
		}
		if len(local) == 0 {
			continue
		}
		file := c.relFile(name)
		for _, d := range f.Decls {
			fn := ""
			if fd, ok := d.(*ast.FuncDecl); ok {
				fn = funcName(fd)
			}
			bounded := map[ast.Node]bool{}
			ast.Inspect(d, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 1 {
					if ip, sel := selectorOf(call.Fun, local); ip == "io" && sel == "ReadAll" {
						if ip, sel := selectorOf(callFun(call.Args[0]), local); ip == "io" && sel == "LimitReader" {
							bounded[call.Fun] = true
						}
					}
				}
				se, ok := n.(*ast.SelectorExpr)
				if !ok || bounded[se] {
					return true
				}
				ip, sel := selectorOf(se, local)
				if !slices.Contains(unboundedReads[ip], sel) || readAllowed(file, fn) {
					return true
				}
				c.report(p, RuleBoundedRd, "uses %s.%s at %s; read files through %s (a regular file, a size cap per kind), or list the function in archtest.UnboundedReads with why",
					path.Base(ip), sel, c.pos(se.Pos()), ReaderPkg)
				return true
			})
		}
	}
}

// selectorOf returns the import path and name e selects when e is
// pkg.Name for a package in local, else "".
func selectorOf(e ast.Expr, local map[string]string) (importPath, name string) {
	se, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	x, ok := se.X.(*ast.Ident)
	if !ok || local[x.Name] == "" {
		return "", ""
	}
	return local[x.Name], se.Sel.Name
}

// callFun is the function e calls, or nil when e is not a call.
func callFun(e ast.Expr) ast.Expr {
	if call, ok := e.(*ast.CallExpr); ok {
		return call.Fun
	}
	return nil
}

// readAllowed reports whether [UnboundedReads] lists function fn of file.
func readAllowed(file, fn string) bool {
	return slices.ContainsFunc(UnboundedReads, func(u UnboundedRead) bool { return u.File == file && u.Func == fn })
}

// checkLineBudget reports p when its non-test source is longer than the
// budget [LineBudgets] gives its tree.
func (c *checker) checkLineBudget(p *goPackage) {
	budget, ok := budgetFor(p.rel)
	if !ok {
		return
	}
	n := 0
	for _, name := range p.sourceFiles() {
		b, err := os.ReadFile(name)
		if err != nil {
			c.report(p, RuleLoadError, "read %s: %v", name, err)
			return
		}
		n += bytes.Count(b, []byte("\n"))
	}
	if n > budget.Max {
		c.report(p, RuleLineBudget, "%d lines of non-test Go; the budget is %d (%s)", n, budget.Max, budget.Why)
	}
}

// budgetFor returns the most specific budget covering rel.
func budgetFor(rel string) (LineBudget, bool) {
	var best LineBudget
	found := false
	for _, b := range LineBudgets {
		if within(rel, b.Tree) && (!found || len(b.Tree) > len(best.Tree)) {
			best, found = b, true
		}
	}
	return best, found
}

// checkFuncLength reports each function of p (test files included) longer
// than [MaxFuncLines] once its table data is left out.
func (c *checker) checkFuncLength(p *goPackage) {
	files := p.sourceFiles()
	for _, f := range join(p.TestGoFiles, p.XTestGoFiles) {
		files = append(files, filepath.Join(p.Dir, f))
	}
	for _, name := range files {
		f := c.parse(p, name)
		if f == nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := c.lines(fd) - c.tableLines(fd.Body); n > MaxFuncLines {
				c.report(p, RuleFuncLength, "func %s is %d lines (%s); split it, the limit is %d without table data",
					funcName(fd), n, c.pos(fd.Pos()), MaxFuncLines)
			}
		}
	}
}

// lines is how many source lines n spans.
func (c *checker) lines(n ast.Node) int {
	return c.fset.Position(n.End()).Line - c.fset.Position(n.Pos()).Line + 1
}

// tableLines counts the lines of the outermost slice and map literals of
// three or more elements in body: table data, not logic.
func (c *checker) tableLines(body ast.Node) int {
	n := 0
	ast.Inspect(body, func(x ast.Node) bool {
		cl, ok := x.(*ast.CompositeLit)
		if !ok {
			return true
		}
		switch cl.Type.(type) {
		case *ast.ArrayType, *ast.MapType:
			if len(cl.Elts) >= 3 {
				n += c.lines(cl)
				return false
			}
		}
		return true
	})
	return n
}

// funcName names a function or method as Recv.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// checkImports reports each import from the module that p's row does not
// allow. In the domain tree such an import breaks invariant 10 and is
// reported as pure-domain.
func (c *checker) checkImports(p *goPackage, row Rule) {
	rule := RuleImport
	if within(p.rel, DomainTree) {
		rule = RulePureDomain
	}
	for _, imp := range p.Imports {
		to, ok := c.rel(imp)
		if !ok || allowed(p.rel, to, row) {
			continue
		}
		why := fmt.Sprintf("%s may import %s", row.Pkg, describe(row))
		if to != row.Pkg && within(to, row.Pkg) {
			why = "packages under one port never import each other"
		}
		c.report(p, rule, "imports %s%s; %s", to, c.where(p, imp), why)
	}
}

// checkStdlibOnly reports each import from outside both the standard
// library and the module.
func (c *checker) checkStdlibOnly(p *goPackage) {
	for _, imp := range p.Imports {
		if _, ok := c.rel(imp); ok {
			continue // rule import-rule
		}
		if q := c.pkgs[imp]; q != nil && q.Standard {
			continue
		}
		c.report(p, RuleStdlibOnly, "imports %s%s; this package imports only the standard library", imp, c.where(p, imp))
	}
}

// checkNoModel reports each agent, model or model-SDK package that p
// depends on, with the import chain that reaches it (invariant 1).
func (c *checker) checkNoModel(p *goPackage) {
	bad := func(ip string) bool {
		if r, ok := c.rel(ip); ok {
			return inAny(r, ModelTrees)
		}
		return inAny(ip, ModelSDKs)
	}
	// Breadth-first over Imports, stopping at the first forbidden package on
	// each path, so a whole SDK is reported once with its shortest chain.
	parent := map[string]string{p.ImportPath: ""}
	queue := []string{p.ImportPath}
	var hits []string
	for len(queue) > 0 {
		ip := queue[0]
		queue = queue[1:]
		if ip != p.ImportPath && bad(ip) {
			hits = append(hits, ip)
			continue
		}
		q := c.pkgs[ip]
		if q == nil {
			continue
		}
		for _, next := range q.Imports {
			if _, seen := parent[next]; !seen {
				parent[next] = ip
				queue = append(queue, next)
			}
		}
	}
	for _, hit := range hits {
		var chain []string
		for ip := hit; ip != ""; ip = parent[ip] {
			chain = append(chain, c.short(ip))
		}
		slices.Reverse(chain)
		c.report(p, RuleNoModel, "depends on %s: %s", c.short(hit), strings.Join(chain, " -> "))
	}
	// Deps is the authority; the walk above only explains it.
	if len(hits) == 0 {
		for _, d := range p.Deps {
			if bad(d) {
				c.report(p, RuleNoModel, "depends on %s", c.short(d))
			}
		}
	}
}

// checkPureDomain reports impure standard-library imports and references to
// the wall clock or fmt's printing (invariant 10). Imports from the module are left to
// checkImports.
func (c *checker) checkPureDomain(p *goPackage) {
	for _, imp := range p.Imports {
		if _, ok := c.rel(imp); !ok && inAny(imp, ImpureStd) {
			c.report(p, RulePureDomain, "imports %s%s; domain does no I/O, network, randomness or unsafe", imp, c.where(p, imp))
		}
	}
	for _, name := range p.sourceFiles() {
		f := c.parse(p, name)
		if f == nil {
			continue
		}
		// Names "time" and "fmt" are imported under, and whether either is
		// dot-imported.
		local := map[string]string{}
		dot := map[string]bool{}
		for _, spec := range f.Imports {
			path := importPath(spec)
			if path != "time" && path != "fmt" {
				continue
			}
			switch {
			case spec.Name == nil:
				local[path] = path
			case spec.Name.Name == ".":
				dot[path] = true
			case spec.Name.Name != "_":
				local[spec.Name.Name] = path
			}
		}
		if len(local) == 0 && len(dot) == 0 {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var pkg, fn string
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && local[x.Name] != "" {
					pkg, fn = local[x.Name], n.Sel.Name
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok {
					switch {
					case dot["time"] && slices.Contains(ClockFuncs, id.Name):
						pkg, fn = "time", id.Name
					case dot["fmt"] && slices.Contains(PrintFuncs, id.Name):
						pkg, fn = "fmt", id.Name
					}
				}
			}
			switch {
			case pkg == "time" && slices.Contains(ClockFuncs, fn):
				c.report(p, RulePureDomain, "uses time.%s at %s; inject a clock instead", fn, c.pos(n.Pos()))
			case pkg == "fmt" && slices.Contains(PrintFuncs, fn):
				c.report(p, RulePureDomain, "calls fmt.%s at %s; domain prints nothing, it returns values and errors", fn, c.pos(n.Pos()))
			}
			return true
		})
	}
}

// checkDispatch reports every selector named Dispatch in p's non-test files:
// only runtime dispatches to a surface (invariant 2). The check is
// syntactic, so it also catches a method value handed to someone else.
func (c *checker) checkDispatch(p *goPackage) {
	for _, name := range p.sourceFiles() {
		f := c.parse(p, name)
		if f == nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == DispatchMethod {
				c.report(p, RuleDispatch, "uses %s.%s at %s; only %s dispatches to a surface",
					exprString(sel.X), DispatchMethod, c.pos(sel.Sel.Pos()), runtime)
			}
			return true
		})
	}
}

// checkDoc reports a package without a package doc comment on a non-test
// file, or one that does not begin "Package <name>". A package with only
// test files (e2e) may carry its doc comment on a test file.
func (c *checker) checkDoc(p *goPackage) {
	synopsis, name := p.Doc, p.Name
	if len(p.GoFiles)+len(p.CgoFiles) == 0 {
		synopsis, name = c.testDoc(p)
	}
	if name == "" {
		return // nothing to read; a load error says why
	}
	if synopsis == "" {
		c.report(p, RulePackageDoc, "no package doc comment; add \"// Package %s ...\" to a non-test file (doc.go)", name)
		return
	}
	if name == "main" {
		return // a command's doc comment begins with its name or "Command"
	}
	words := strings.Fields(synopsis)
	if len(words) < 2 || words[0] != "Package" || strings.TrimRight(words[1], ".,:;") != name {
		c.report(p, RulePackageDoc, "package doc comment begins %q; begin it \"Package %s\"", firstWords(synopsis, 4), name)
	}
}

// testDoc returns the synopsis of the first package doc comment on p's test
// files and that file's package name.
func (c *checker) testDoc(p *goPackage) (synopsis, name string) {
	for _, f := range join(p.TestGoFiles, p.XTestGoFiles) {
		af, err := parser.ParseFile(c.fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			c.report(p, RuleLoadError, "parse %s: %s", c.relFile(filepath.Join(p.Dir, f)), oneLine(err.Error()))
			continue
		}
		if name == "" {
			name = af.Name.Name
		}
		if af.Doc != nil {
			return new(doc.Package).Synopsis(af.Doc.Text()), af.Name.Name
		}
	}
	return "", name
}

// parse parses a non-test file of p once. A file that does not parse is a
// load-error violation and yields nil.
func (c *checker) parse(p *goPackage, name string) *ast.File {
	if f, ok := c.parsed[name]; ok {
		return f
	}
	f, err := parser.ParseFile(c.fset, name, nil, parser.SkipObjectResolution)
	if err != nil {
		c.report(p, RuleLoadError, "parse %s: %s", c.relFile(name), oneLine(err.Error()))
		f = nil
	}
	c.parsed[name] = f
	return f
}

// where returns " (file:line)" for the first import of imp in p's non-test
// files, or "" if it cannot be found.
func (c *checker) where(p *goPackage, imp string) string {
	for _, name := range p.sourceFiles() {
		f := c.parse(p, name)
		if f == nil {
			continue
		}
		for _, spec := range f.Imports {
			if importPath(spec) == imp {
				return " (" + c.pos(spec.Pos()) + ")"
			}
		}
	}
	return ""
}

// pos formats pos as module-relative file:line.
func (c *checker) pos(pos token.Pos) string {
	p := c.fset.Position(pos)
	return c.relFile(p.Filename) + ":" + strconv.Itoa(p.Line)
}

// relFile names a file relative to the module root, with slashes.
func (c *checker) relFile(name string) string {
	if r, err := filepath.Rel(c.dir, name); err == nil {
		return filepath.ToSlash(r)
	}
	return name
}

// rowFor returns the row of rel: its own, or its nearest listed ancestor's.
func rowFor(rel string) (Rule, bool) {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		for _, r := range Rules {
			if r.Pkg == p {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// allowed reports whether from (whose row is row) may import to; all three
// are module-relative.
func allowed(from, to string, row Rule) bool {
	for _, m := range row.MayNotImport {
		if m == to || within(to, strings.TrimSuffix(m, "/...")) {
			return false
		}
	}
	switch {
	case within(to, from):
		return true // its own descendant
	case from != row.Pkg && within(from, to) && within(to, row.Pkg):
		return true // an ancestor up to its row: an adapter imports its port
	case slices.Contains(Leaves, to) && !slices.Contains(noLeaves, row.Pkg):
		return true
	}
	for _, m := range row.MayImport {
		if m == Everything || m == to {
			return true
		}
		if tree, ok := strings.CutSuffix(m, "/..."); ok && within(to, tree) {
			return true
		}
	}
	return false
}

// describe lists what row may import, for a violation's detail.
func describe(row Rule) string {
	if len(row.MayImport) == 0 {
		return "nothing of the module"
	}
	s := "only " + strings.Join(row.MayImport, ", ")
	if len(row.MayNotImport) > 0 {
		s += " and never " + strings.Join(row.MayNotImport, ", ")
	}
	return s
}

// within reports whether p is root or below it, at a path element boundary.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// inAny reports whether p is within any of roots.
func inAny(p string, roots []string) bool {
	return slices.ContainsFunc(roots, func(root string) bool { return within(p, root) })
}

// importPath returns the unquoted path of an import spec.
func importPath(spec *ast.ImportSpec) string {
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return spec.Path.Value
	}
	return p
}

// exprString renders the receiver of a selector briefly.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "(…)"
	case *ast.ParenExpr:
		return "(" + exprString(e.X) + ")"
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.IndexExpr:
		return exprString(e.X) + "[…]"
	}
	return "…"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = w[:n]
	}
	return strings.Join(w, " ")
}
