package archtest

// Everything in a [Rule.MayImport] list allows every package of the module.
const Everything = "..."

// Rule is one row of DESIGN.md's package table: the module-relative package
// Pkg may import, from this module, only the packages in MayImport.
//
// An entry of MayImport names exactly one package, not its subpackages: a row
// that may import a port (internal/surface, internal/model, internal/store)
// may not import the port's adapters, which only the composition root
// (internal/cli) wires. An entry ending in "/..." names a whole tree, and
// [Everything] names the whole module.
//
// Rows are inherited. A package that is not a row itself takes the row of its
// nearest listed ancestor and may also import every ancestor up to that row:
// internal/surface/browser may import what internal/surface may, plus
// internal/surface itself (an adapter imports its port). Siblings are not
// ancestors, so two adapters of one port never import each other.
//
// Every package may also import its own descendants (internal/store/sqlite
// may import internal/store/sqlite/migration). That widens nothing: a
// descendant is held to the same row plus its ancestors, and a port cannot
// import an adapter that imports the port without an import cycle.
//
// MayNotImport narrows a row: its entries (same spelling as MayImport) are
// refused even where MayImport allows them, so the composition root may
// wire everything except the engine's internals.
type Rule struct {
	Pkg          string
	MayImport    []string
	MayNotImport []string
}

// Module-relative paths of the rows, so the table below reads like DESIGN.md.
const (
	domain     = "internal/domain"
	capability = "internal/capability"
	perception = "internal/perception"
	targeting  = "internal/targeting"
	redact     = "internal/redact"
	policy     = "internal/policy"
	surface    = "internal/surface"
	runtime    = "internal/runtime"
	replay     = "internal/replay"
	model      = "internal/model"
	agent      = "internal/agent"
	recorder   = "internal/recorder"
	evidence   = "internal/evidence"
	store      = "internal/store"
	principal  = "internal/principal"
	catalog    = "internal/catalog"
	hitl       = "internal/hitl"
	console    = "internal/console"
	record     = "internal/record"
	observer   = "internal/observer"
	codegen    = "internal/codegen"
	receipt    = "internal/receipt"
	mockapp    = "internal/mockapp"
	pipeline   = "internal/pipeline"
	jobs       = "internal/jobs"
	heal       = "internal/heal"
	server     = "internal/server"
	demo       = "internal/demo"
	launch     = "internal/launch"
	statewire  = "internal/statewire"
	secret     = "internal/secret"
	report     = "internal/report"
	cli        = "internal/cli"
	cmds       = "internal/cmd"
	cmdutil    = "internal/cmdutil"
	toolspec   = "internal/toolspec"
	mcpserver  = "internal/mcpserver"
	archtest   = "internal/archtest"
	fsx        = "internal/fsx"
	cmdCua     = "cmd/cua"
	clidoc     = "internal/clidoc"
	cmdClidoc  = "cmd/clidoc"
	schema     = "schema"
	bench      = "bench"
	e2e        = "e2e"
	explorer   = "examples/explorer"
)

// DESIGN.md gives runtime "everything above" and replay, agent and console
// "runtime and below". We read them as follows.
var (
	// runtimeMay is "everything above" runtime: the rows above it in the
	// table (domain through surface), plus evidence and hitl, which sit below
	// runtime in the table but whose work its row names: runtime emits
	// "evidence events" into evidence's log and performs the "lease/epoch
	// check" on hitl's leases. Both import only domain, redact and policy,
	// so allowing them adds no upward edge and no cycle.
	runtimeMay = []string{domain, capability, perception, targeting, redact, policy, surface, evidence, hitl}

	// runtimeAndBelow is runtime plus everything runtime may import. It
	// contains no model, agent or adapter.
	runtimeAndBelow = join(runtimeMay, []string{runtime})
)

// Rules is DESIGN.md's package table for module-relative paths.
var Rules = []Rule{
	// Types only; imports nothing of the module, and invariant 10 (rule
	// pure-domain) also bans I/O, network, clock and randomness.
	{Pkg: domain},
	{Pkg: capability, MayImport: []string{domain}},
	{Pkg: perception, MayImport: []string{domain}},
	{Pkg: targeting, MayImport: []string{domain, perception}},
	{Pkg: redact, MayImport: []string{domain}},
	{Pkg: policy, MayImport: []string{domain, targeting}},
	// The port and, by inheritance, its adapters surface/browser,
	// surface/state, surface/sim, surface/desktop and the conformance suite
	// surface/surfacetest; each of those may also import surface itself.
	// policy is allowed for the AuthorizedAction token only.
	// statewire is the state contract's wire types, shared with mockapp.
	{Pkg: surface, MayImport: []string{domain, perception, policy, statewire}},
	// The desktop adapter also masks its own X screenshots with redact's
	// MaskPNG (sensitive nodes' boxes black), as web screenshots are masked.
	{Pkg: surface + "/desktop", MayImport: []string{domain, perception, policy, redact, surface}},
	// The browser adapter paints its masks with redact's Blacken, the one
	// painting of every masked screenshot.
	{Pkg: surface + "/browser", MayImport: []string{domain, perception, policy, statewire, redact, surface}},
	{Pkg: runtime, MayImport: runtimeMay},
	// Runtime and below; never agent, model or a model SDK (invariant 1 is
	// also checked transitively by rule no-model-in-replay).
	// receipt (domain only) builds the plan and receipt every run writes.
	{Pkg: replay, MayImport: join(runtimeAndBelow, []string{receipt})},
	// The port; adapters model/openai, model/anthropic, model/cassette,
	// model/exec and model/modeltest inherit it plus model.
	{Pkg: model, MayImport: []string{domain}},
	{Pkg: agent, MayImport: join(runtimeAndBelow, []string{model})},
	{Pkg: recorder, MayImport: []string{domain, capability, targeting}},
	{Pkg: evidence, MayImport: []string{domain, redact}},
	// The deployment's evidence signing key: its file under the data
	// directory (0600 in 0700), CUA_SIGNING_KEY taken out of the
	// environment at start, the text forms of both halves. Imports nothing
	// of the module but the fsx leaf; evidence signs every finished bundle's manifest with
	// it (invariant 18).
	{Pkg: evidence + "/signkey"},
	// The evidence store a fleet shares (--evidence file:// or s3://):
	// publishing closed bundles and fetching them back, bounded.
	{Pkg: evidence + "/evstore", MayImport: []string{evidence}},
	// The port; store/storetest inherits it plus store.
	{Pkg: store, MayImport: []string{domain}},
	// The SQL both adapters share: one implementation of the port over
	// database/sql and a dialect per database. The adapters open their
	// database and hand it to sqlstore; they never import each other.
	{Pkg: store + "/sqlstore", MayImport: []string{domain, store}},
	{Pkg: store + "/sqlite", MayImport: []string{domain, store, store + "/sqlstore"}},
	{Pkg: store + "/postgres", MayImport: []string{domain, store, store + "/sqlstore"}},
	// Principals: names, roles, token hashes and lockout over the store
	// port (no adapter; the composition root opens one).
	{Pkg: principal, MayImport: []string{domain, store}},
	// policy decides whether inputs fit an approval's bounds; principal
	// checks that an approver or revoker is a principal's String form.
	{Pkg: catalog, MayImport: []string{domain, capability, policy, store, principal}},
	{Pkg: hitl, MayImport: []string{domain, policy}},
	// The intervention queue's store adapter: hitl's Queue port over the
	// store port (no adapter of the store; the composition root opens one).
	{Pkg: hitl + "/hitlstore", MayImport: []string{domain, hitl, store}},
	// DESIGN.md says "hitl, runtime, …". We read the ellipsis as "and what
	// they stand on": hitl, runtime and everything runtime may import. No
	// replay, model, agent, store or adapter: the composition root wires
	// those in through the console's own narrow interfaces.
	{Pkg: console, MayImport: join(runtimeAndBelow, []string{hitl})},
	// cua record: a demonstration in a console session compiled by the
	// recorder, sealed and replayed (replay) at once. Runtime and below,
	// hitl and the console it parks in; never agent or model (no model
	// sees a recording).
	{Pkg: record, MayImport: join(runtimeAndBelow, []string{hitl, console, recorder, replay})},
	// DESIGN.md says "evidence, store". We add domain and redact, which
	// evidence itself stands on: the run records the observer serves are
	// domain types, and its exposure matrix may redact on the way out.
	{Pkg: observer, MayImport: []string{domain, redact, evidence, store}},
	{Pkg: codegen, MayImport: []string{domain, capability}},
	{Pkg: receipt, MayImport: []string{domain}},
	// Stdlib only (see [StdlibOnly]), and the state contract's wire types.
	{Pkg: mockapp, MayImport: []string{statewire}},
	// The state contract's JSON types: stdlib only, shared by the state
	// surface, MemberDesk and the contract's test server.
	{Pkg: statewire},
	// DESIGN.md says "agent, recorder, capability, replay, evidence". We add
	// what those stand on (runtime and below) and the model port the agent
	// is driven through; adapters are wired by the composition root.
	{Pkg: pipeline, MayImport: join(runtimeAndBelow, []string{model, agent, recorder, replay})},
	// DESIGN.md says "replay, catalog, store, hitl"; plus what replay stands on.
	{Pkg: jobs, MayImport: join(runtimeAndBelow, []string{replay, catalog, store, receipt})},
	// Heal proposals (issue 29): a halted run's draft next version, its
	// review, canary and rollback. It reads the halted screen with
	// targeting, hands drafts to the catalog and runs the MemberDesk
	// batteries through a runner it is given; it never reaches a model
	// (rule no-model-in-heal, also transitively), so a heal is never a
	// model's guess.
	{Pkg: heal, MayImport: join(runtimeAndBelow, []string{replay, receipt, catalog, store, principal, mockapp}), MayNotImport: []string{model, agent}},
	// The queue's runs wired to pipeline.Replay over launch's sessions, as
	// `cua replay` runs them: part of the composition root for workers.
	// `cua serve`'s HTTP API over the queue.
	{Pkg: jobs + "/api", MayImport: []string{jobs}},
	{Pkg: jobs + "/runner", MayImport: join(runtimeAndBelow, []string{jobs, replay, catalog, pipeline, launch})},
	{Pkg: server, MayImport: join(runtimeAndBelow, []string{jobs, catalog, store, pipeline, receipt, replay})},
	// Opening a surface session or a model for a command (a shared Chromium, a state
	// contract session): part of the composition root, so it may wire the
	// surface adapters, and nothing else of the engine.
	// It also builds the model a discovery talks to, from its name, and
	// opens the store a command names (an adapter) with the catalog over it.
	// principal: the OS user a catalog records when no principal is given
	// is spelled as an unverified principal.
	{Pkg: launch, MayImport: []string{domain, surface + "/...", model + "/...", store + "/...", catalog, principal}},
	// Secrets leaving the environment, the secrets file, the key scan.
	{Pkg: secret, MayImport: []string{domain, capability, redact}},
	// Text output of run records, pipeline results and file checks.
	{Pkg: report, MayImport: []string{domain, capability, agent, pipeline, redact}},
	// Tool definitions of approved capabilities, read from the catalog.
	{Pkg: toolspec, MayImport: []string{domain, capability, catalog, store}},
	// The MCP server: approved capabilities as tools, each call a replay
	// through the pipeline and the catalog's gate, on sessions a front end
	// opens (surface, for the Opener's session type).
	{Pkg: mcpserver, MayImport: join(runtimeAndBelow, []string{replay, pipeline, catalog, store, toolspec})},
	// The demo's stages and expectations: everything but cli.
	{Pkg: demo, MayImport: []string{Everything}, MayNotImport: []string{cli}},
	// The composition root: the command tree assembled from the command
	// packages, and exit codes. Nothing of the engine but taking secrets
	// (and the signing key) out of the environment at start.
	// It also takes CUA_SIGNING_KEY out of the environment (signkey).
	{Pkg: cli, MayImport: []string{cmds + "/...", cmdutil, secret, evidence + "/signkey"}},
	// One package per command (internal/cmd/<name>, inheriting this row):
	// flags, validation and printing, wiring every adapter through launch,
	// with no engine logic of their own: resolving targets, reading
	// snapshots and dispatching belong to the engine, never to a command,
	// and a command never reaches into a surface adapter's internals.
	{Pkg: cmds, MayImport: []string{Everything}, MayNotImport: []string{targeting, perception, runtime, cli, surface + "/..."}},
	// What every command shares: streams, the factory, exit-code errors,
	// flag helpers and opening the catalog a --db names, and resolving the
	// principal running the command (CUA_PRINCIPAL_TOKEN or the OS user).
	// evidence and evidence/evstore: --evidence publishes bundles to a store.
	{Pkg: cmdutil, MayImport: []string{domain, redact, pipeline, launch, catalog, store, report, principal, evidence, evidence + "/evstore"}},
	// The one bounded reader of files (invariant 22): stdlib only, a leaf
	// every row but domain may import (see [Leaves]).
	{Pkg: fsx},
	// Test-only checker; its non-test code is stdlib only. Test files are
	// never subject to import rules, so its tests may import anything.
	{Pkg: archtest},
	// main only starts things: root ctx, cli.Main, os.Exit.
	{Pkg: cmdCua, MayImport: []string{cli}},
	// The CLI reference's renderer: a cobra tree to one Markdown page per
	// command (cobra and the fsx leaf only; the tree is handed to it).
	{Pkg: clidoc},
	// `make docs`: builds the tree as cua does (cli, with cmdutil's empty
	// environment) and writes docs/reference/cli through clidoc.
	{Pkg: cmdClidoc, MayImport: []string{cli, clidoc, cmdutil}},
	// The published JSON Schemas, embedded; imports nothing of the module.
	{Pkg: schema},
	// Benchmarks and end-to-end tests drive the whole product.
	{Pkg: bench, MayImport: []string{Everything}},
	{Pkg: e2e, MayImport: []string{Everything}},
	// A scripted discovery provider run through exec: stdlib only, it speaks
	// the exec adapter's JSON and knows nothing of the module.
	{Pkg: explorer},
}

// LineBudget bounds the non-test source of every package in Tree.
type LineBudget struct {
	Tree string
	Max  int
	Why  string
}

// LineBudgets keep the command line thin (issue 10): the root under 900
// lines, each command small enough to read at once, the shared helpers
// smaller still. A command that grows past its budget is carrying logic
// that belongs in an engine package.
var LineBudgets = []LineBudget{
	{Tree: cli, Max: 900, Why: "the root assembles commands; it holds no command"},
	{Tree: cmds, Max: 400, Why: "a command is flags, validation and printing; move logic to its engine package"},
	{Tree: cmdutil, Max: 300, Why: "only what every command shares"},
}

// Leaves are packages that import nothing of the module. Any row may import
// them except those in [noLeaves]: the schema package holds the embedded
// JSON Schemas that capability, evidence, receipt and others validate
// against, and fsx is the one bounded reader every package that reads a
// file goes through (rule bounded-read); a package that imports nothing of
// the module cannot create a layering problem.
var Leaves = []string{schema, fsx}

// noLeaves are the rows that may not import [Leaves]: domain is pure,
// mockapp and archtest are stdlib only, and main imports only cli.
var noLeaves = []string{domain, mockapp, statewire, archtest, cmdCua, schema, explorer, fsx}

// StdlibOnly are trees whose non-test code imports nothing outside the
// standard library (rule stdlib-only; imports from the module are left to
// rule import-rule).
var StdlibOnly = []string{mockapp, statewire, archtest, explorer, fsx}

// ReplayTree is the tree that must not reach a model (invariant 1).
const ReplayTree = replay

// NoModelTrees are the trees held to rule no-model-in-replay: replay
// (invariant 1) and heal, whose proposals are deterministic rules over a
// halted screen, never a model's guess (issue 29).
var NoModelTrees = []string{ReplayTree, heal}

// ModelTrees are the module trees replay must never depend on, even
// transitively (invariant 1).
var ModelTrees = []string{agent, model}

// ModelSDKs are import-path prefixes of model SDKs (matched at a path
// element boundary, so "github.com/openai/openai-go" also covers
// ".../openai-go/v3/option"). The MCP Go SDK is not a model SDK.
var ModelSDKs = []string{
	"github.com/openai/openai-go",
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/sashabaranov/go-openai",
	"github.com/liushuangls/go-anthropic",
	"github.com/google/generative-ai-go",
	"google.golang.org/genai",
	"cloud.google.com/go/vertexai",
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime",
	"github.com/ollama/ollama",
	"github.com/tmc/langchaingo",
	"github.com/cohere-ai/cohere-go",
}

// DomainTree is the tree that must be pure (invariant 10).
const DomainTree = domain

// ImpureStd are standard-library import paths the domain tree may not
// import (matched at a path element boundary: "net" covers "net/http").
// "C" is cgo.
var ImpureStd = []string{
	"C",
	"os",
	"log", // and log/slog, log/syslog: domain writes nothing
	"net",
	"io/fs",
	"io/ioutil",
	"database",
	"syscall",
	"unsafe",
	"math/rand",
	"crypto/rand",
	"runtime/cgo",
	"plugin",
}

// ClockFuncs are the functions of package time that read or wait on the
// wall clock; the domain tree may not refer to them (invariant 10).
var ClockFuncs = []string{
	"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker",
}

// PrintFuncs are the functions of package fmt that write to standard
// output; the domain tree may not call them (it returns values and errors,
// and never prints).
var PrintFuncs = []string{"Print", "Printf", "Println"}

// DispatchMethod is the surface method only the dispatch trees may call
// (invariant 2).
const DispatchMethod = "Dispatch"

// DispatchTrees may use a selector named [DispatchMethod]: runtime is the
// chokepoint, and surface adapters may delegate to one another internally.
var DispatchTrees = []string{runtime, surface}

// join returns a new slice holding the elements of every list, in order.
func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// ReaderPkg is the one package that may read files whole or open them bare
// (invariant 22): every other read goes through its bounded reader, which
// refuses anything but a regular file and caps each kind's size.
const ReaderPkg = fsx

// BoundedReadTrees are the trees of cua itself held to rule bounded-read:
// outside [ReaderPkg] their non-test files may not call os.ReadFile,
// os.Open, ioutil.ReadFile or ioutil.ReadAll, nor io.ReadAll unless its
// argument is written io.LimitReader(...) in the call (a bounded stream:
// an HTTP body, a child's output). bench, e2e and examples are tools and
// tests around cua, not cua, and are left out; so are test files.
// os.OpenFile is not refused: cua opens files to write with it, and a read
// through it is reviewed like any other.
var BoundedReadTrees = []string{"internal", "cmd"}

// UnboundedRead is one function allowed a read rule bounded-read refuses.
type UnboundedRead struct {
	File string // module-relative, slash-separated
	Func string // as the rule names it: Name or Recv.Name
	Why  string
}

// UnboundedReads are the only exceptions to rule bounded-read. Each reads a
// path no user, flag or bundle names, or cannot import [ReaderPkg].
var UnboundedReads = []UnboundedRead{
	{File: "internal/archtest/archtest.go", Func: "checker.checkLineBudget",
		Why: "the checker reads the module's own Go files and imports only the standard library"},
	{File: "internal/surface/desktop/session.go", Func: "groupAlive", Why: "/proc/<pid>/stat, a kernel file"},
	{File: "internal/surface/browser/browser.go", Func: "profileOf", Why: "/proc/<pid>/cmdline, a kernel file"},
	{File: "internal/surface/browser/browser.go", Func: "browserBinary",
		Why: "two bytes of Debian's fixed chromium wrapper path, never a user's path"},
	{File: "internal/store/pgtest/pgtest.go", Func: "Server.run", Why: "a test helper's own PostgreSQL log"},
	{File: "internal/model/modeltest/server.go", Func: "Server.serve",
		Why: "a test fake reading a request body its own test's client sent"},
}
