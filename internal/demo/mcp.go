package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/mcpserver"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/toolspec"
)

// The agent stages' tool and the sub-capability no one approved, which it
// must not see.
var (
	lookupTool = toolspec.Name(lookupCap)
	signOnTool = toolspec.Name("corebank.auth.sign_on")
)

// mcpStages are the agent's side of the story: a scripted MCP client
// speaking the stdio transport (newline-delimited JSON-RPC on a pipe pair)
// to the server `cua mcp` runs, over the demo's catalog, where a reviewer
// approved exactly the two lookups the agent makes (one-off approvals). It
// lists the tools, calls the savings lookup and gets typed outputs, then
// calls it for a member that does not exist and gets the business outcome.
// Each call is a real replay in the demo's browser, checked through the
// record its evidence holds.
func (e *env) mcpStages(ctx context.Context) []*Result {
	member := func(id string) map[string]string { return map[string]string{"member_id": id} }
	list := &Result{Stage: Stage{Name: "agent lists tools over MCP (stdio)", Capability: lookupCap, WantDispatches: -1}}
	found := &Result{Stage: Stage{Name: "agent calls the lookup: typed outputs", Capability: lookupCap, Inputs: member("12345"),
		WantStatus: domain.StatusSuccess, WantOutputs: map[string]string{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"},
		WantDispatches: -1}}
	missing := &Result{Stage: Stage{Name: "agent: member not found is an answer", Capability: lookupCap, Inputs: member("99999"),
		WantStatus: domain.StatusBusinessOutcome, WantOutcome: "member_not_found", WantDispatches: -1}}
	all := []*Result{list, found, missing}
	fail := func(format string, args ...any) []*Result {
		for _, r := range all {
			if r.Problem == "" && !r.Pass {
				r.fail(format, args...)
			}
		}
		return all
	}
	cat, closeStore, err := e.openCatalog(ctx)
	if err != nil {
		return fail("%v", err)
	}
	defer closeStore()
	for _, r := range all[1:] {
		if _, err := cat.Approve(ctx, lookupCap+"@1.2.0", catalog.ApproveParams{Once: true, Inputs: r.Inputs, Approver: "demo-reviewer",
			Note: "cua demo: the agent's lookup", Expires: approvalLife}); err != nil {
			return fail("approve the agent's lookup: %v", err)
		}
	}
	cs, progress, stop, err := e.agent(ctx, cat)
	if err != nil {
		return fail("connect the agent: %v", err)
	}
	defer stop()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fail("list tools: %v", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	list.Pass = slices.Contains(names, lookupTool) && !slices.Contains(names, signOnTool)
	if list.Detail = fmt.Sprintf("tools %v; %s (not approved) not listed", names, signOnTool); !list.Pass {
		list.fail("tools %v: want %s listed and %s not", names, lookupTool, signOnTool)
	}
	for _, r := range all[1:] {
		e.agentCall(ctx, cs, progress, r)
	}
	return all
}

// agent starts the MCP server on one end of a pipe pair and connects a
// client to the other; stop ends both.
func (e *env) agent(ctx context.Context, cat *catalog.Catalog) (*mcp.ClientSession, *atomic.Int64, func(), error) {
	open := func(ctx context.Context) (surface.Surface, error) {
		s, err := e.br.NewSession(ctx)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	srv, err := mcpserver.New(mcpserver.Config{Catalog: cat, Open: func(*domain.Capability) pipeline.Opener { return open }, BaseURL: e.base, DataDir: e.cfg.DataDir,
		Secrets: demoSecrets(), MaxSessions: 1, NewRunID: e.cfg.RunID, Version: "demo"})
	if err != nil {
		return nil, nil, nil, err
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(sctx, &mcp.IOTransport{Reader: sr, Writer: sw})
	}()
	progress := &atomic.Int64{}
	c := mcp.NewClient(&mcp.Implementation{Name: "cua-demo-agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) }})
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	stop := func() {
		if cs != nil {
			_ = cs.Close()
		}
		cancel()
		_ = sw.Close()
		_ = cw.Close()
		<-done
	}
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return cs, progress, stop, nil
}

// agentCall calls the lookup tool with r's inputs (and a progress token),
// then checks the structured result and the run's evidence against r.
func (e *env) agentCall(ctx context.Context, cs *mcp.ClientSession, progress *atomic.Int64, r *Result) {
	if err := e.prepare(ctx, r.Stage); err != nil {
		r.fail("%v", err)
		return
	}
	p := &mcp.CallToolParams{Name: lookupTool, Arguments: r.Inputs}
	p.SetProgressToken(r.Inputs["member_id"])
	before := progress.Load()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(cctx, p)
	if err != nil {
		r.fail("call %s: %v", lookupTool, err)
		return
	}
	var got toolspec.Result
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &got); err != nil {
		r.fail("structured content %s: %v", data, err)
		return
	}
	rec, err := readRecord(filepath.Join(e.cfg.DataDir, "runs", got.RunID, "record.json"))
	if err != nil {
		r.fail("run %s: %v", got.RunID, err)
		return
	}
	r.Record, r.Pass = rec, true
	if p := checkRecord(r.Stage, rec); p != "" {
		r.fail("%s", p)
	} else if got.Status != rec.Status || got.Outcome != rec.Outcome || fmt.Sprint(got.Outputs) != fmt.Sprint(rec.Outputs) {
		r.fail("tool result %s disagrees with run %s", data, rec.RunID)
	}
	e.checkApp(ctx, r)
	if r.Pass {
		r.Detail = fmt.Sprintf("tool result %s; %d progress notifications", compact(got), progress.Load()-before)
	}
}

// compact is the result without its ids, for one line.
func compact(r toolspec.Result) string {
	r.RunID, r.ContentHash = "", ""
	b, _ := json.Marshal(r)
	return string(b)
}

func readRecord(path string) (*domain.RunRecord, error) {
	data, err := fsx.ReadFile(path, fsx.MaxRecord)
	if err != nil {
		return nil, err
	}
	var rec domain.RunRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}
