package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logBuilders are the directory globs whose non-test code builds the
// loggers of cua's commands: this package, the shared command helpers, every
// command package, and the pipeline the discover and replay wiring calls.
var logBuilders = []string{".", "../cmdutil", "../cmd/*", "../pipeline"}

// logExempt names the files whose logger is not a sink of cua's secrets:
// `cua mockapp` logs the mock application's own requests (it is the
// application under test, and holds no secret store).
var logExempt = map[string]bool{"mockapp.go": true}

// TestCommandLogsAreRedacted: every logger a command builds (slog.New) must
// write through redact.NewHandler, and the redactor it is given must be a
// variable the function also hands on (to replay.Options, agent.Config, a
// stage builder), so the literals the run registers when it resolves a
// secret reach the log handler too.
//
// It checks the source, not a log line: at the commands' level (Warn) no
// log line of replay, discover or demo carries page text or a resolved
// value today ("session lost", "browser connection lost", "evidence event
// dropped" and "remove browser temp dir" quote fixed text and paths), so
// removing the handler changes no output a run can provoke; the
// e2e canary tests scan stderr for the day one does. Mutations killed:
// redact.NewHandler dropped from any command's logger
// (slog.New(slog.NewTextHandler(…))), and the handler given a fresh
// redactor (redact.New()) that never learns the run's secrets.
func TestCommandLogsAreRedacted(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	found := 0
	var parsed []*ast.File
	for _, dir := range logBuilders {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files under %s: point logBuilders at the commands", dir)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			base := filepath.Base(path)
			if strings.HasSuffix(base, "_test.go") || logExempt[base] {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			parsed = append(parsed, f)
		}
	}
	builders := map[string]int{}
	for _, f := range parsed {
		for _, problem := range checkLoggers(fset, f, &found, builders) {
			t.Error(problem)
		}
	}
	for _, f := range parsed {
		for _, problem := range checkBuilderCalls(fset, f, builders) {
			t.Error(problem)
		}
	}
	if found == 0 {
		t.Fatalf("no slog.New call in %v: the commands' loggers moved; point logBuilders at them", logBuilders)
	}
}

// checkLoggers returns a problem for each slog.New call in f whose handler
// is not redact.NewHandler(_, red) with red used again in the same
// function; it counts the calls in *found. A function whose red is one of
// its parameters is a logger builder: it is recorded in builders (name ->
// the parameter's index) and its callers are checked instead.
func checkLoggers(fset *token.FileSet, f *ast.File, found *int, builders map[string]int) []string {
	var problems []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isSel(call.Fun, "slog", "New") || len(call.Args) != 1 {
				return true
			}
			*found++
			pos := fset.Position(call.Pos())
			h, ok := call.Args[0].(*ast.CallExpr)
			if !ok || !isSel(h.Fun, "redact", "NewHandler") || len(h.Args) != 2 {
				problems = append(problems, pos.String()+": "+fn.Name.Name+" builds a logger without redact.NewHandler")
				return true
			}
			red, ok := h.Args[1].(*ast.Ident)
			if !ok {
				problems = append(problems, pos.String()+": "+fn.Name.Name+"'s log handler gets a redactor no other part of the run uses")
				return true
			}
			if i := paramIndex(fn, red.Name); i >= 0 {
				builders[fn.Name.Name] = i
				return true
			}
			if uses := identUses(fn.Body, red.Name); uses < 2 {
				problems = append(problems, pos.String()+": "+fn.Name.Name+"'s log redactor "+red.Name+" is handed to nothing else, so it never learns the run's secrets")
			}
			return true
		})
	}
	return problems
}

// isSel reports whether e is pkg.name.
func isSel(e ast.Expr, pkg, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != name {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == pkg
}

// identUses counts the reads of name in body as a call argument, a
// composite literal's value or a value stored into a field (its definition
// does not count).
func identUses(body *ast.BlockStmt, name string) int {
	n := 0
	is := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == name
	}
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.CallExpr:
			for _, a := range x.Args {
				if is(a) {
					n++
				}
			}
		case *ast.KeyValueExpr:
			if is(x.Value) {
				n++
			}
		case *ast.AssignStmt: // r.Redactor = red
			for i, rhs := range x.Rhs {
				if _, field := x.Lhs[min(i, len(x.Lhs)-1)].(*ast.SelectorExpr); field && is(rhs) {
					n++
				}
			}
		}
		return true
	})
	return n
}

// paramIndex is the position of the parameter called name in fn, or -1.
func paramIndex(fn *ast.FuncDecl, name string) int {
	i := 0
	for _, field := range fn.Type.Params.List {
		for _, id := range field.Names {
			if id.Name == name {
				return i
			}
			i++
		}
	}
	return -1
}

// checkBuilderCalls returns a problem for each call of a logger builder
// whose redactor argument is not a variable the calling function also hands
// on to the run.
func checkBuilderCalls(fset *token.FileSet, f *ast.File, builders map[string]int) []string {
	var problems []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		// A function literal taking a redactor is itself a logger builder
		// (a run hands it the run's own redactor): its parameter passes.
		litParams := map[string]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.FuncLit); ok {
				for _, f := range lit.Type.Params.List {
					if isSel(f.Type, "redact", "Redactor") || isStarSel(f.Type, "redact", "Redactor") {
						for _, name := range f.Names {
							litParams[name.Name] = true
						}
					}
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if sel, isSel := call.Fun.(*ast.SelectorExpr); isSel {
				id, ok = sel.Sel, true // cmdutil.NewLogger(…)
			}
			if !ok {
				return true
			}
			i, ok := builders[id.Name]
			if !ok || i >= len(call.Args) {
				return true
			}
			pos := fset.Position(call.Pos()).String()
			red, ok := call.Args[i].(*ast.Ident)
			if !ok {
				problems = append(problems, pos+": "+fn.Name.Name+" gives "+id.Name+" a redactor no other part of the run uses")
				return true
			}
			if !litParams[red.Name] && identUses(fn.Body, red.Name) < 2 && countSelectorUses(fn.Body, red.Name) == 0 {
				problems = append(problems, pos+": "+fn.Name.Name+"'s log redactor "+red.Name+" is handed to nothing else, so it never learns the run's secrets")
			}
			return true
		})
	}
	return problems
}

// countSelectorUses counts name.X expressions in body (red.String handed to
// a cassette, for instance).
func countSelectorUses(body *ast.BlockStmt, name string) int {
	n := 0
	ast.Inspect(body, func(node ast.Node) bool {
		if s, ok := node.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == name {
				n++
			}
		}
		return true
	})
	return n
}

// isStarSel reports whether e is *pkg.name.
func isStarSel(e ast.Expr, pkg, name string) bool {
	st, ok := e.(*ast.StarExpr)
	return ok && isSel(st.X, pkg, name)
}
