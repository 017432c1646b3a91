package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/toolspec"
)

func (s *Server) handler(spec *toolspec.Spec) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.call(ctx, spec, req)
	}
}

// call runs one tool call: arguments outside the input schema are refused
// as INPUT_INVALID with a run record and no session; the rest goes through
// pipeline.Replay under the catalog's unattended gate, one session of the
// MaxSessions bound held for the run.
func (s *Server) call(ctx context.Context, spec *toolspec.Spec, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	runID, red := s.cfg.NewRunID(), redact.New()
	log := s.logger(red)
	l, err := s.resolve(ctx, spec)
	if err != nil {
		return nil, err
	}
	args, err := spec.Args(req.Params.Arguments)
	if err != nil {
		rec, rerr := s.refuseInput(ctx, l, runID, red, req.Params.Arguments, err)
		if rerr != nil {
			return nil, rerr
		}
		return result(toolspec.NewResult(rec, "")), nil
	}
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	o := replay.Options{Capability: l, Inputs: args, BaseURL: s.cfg.BaseURL, Secrets: s.cfg.Secrets, Redactor: red,
		Logger: log, RunID: runID, DataDir: s.cfg.DataDir, OnStep: progress(ctx, req, log)}
	rec, err := pipeline.Replay(ctx, pipeline.ReplayParams{Run: o, Library: s.cfg.Catalog.Library(ctx),
		Gate: s.cfg.Catalog.Gate(catalog.RunParams{Unattended: true}), Open: s.cfg.Open(l.Capability)})
	if err != nil {
		// The run could not be made or recorded: a tool error, redacted.
		return result(toolspec.Result{Status: domain.StatusFailed, RunID: runID, Capability: spec.Capability,
			ContentHash: spec.ContentHash, FailureCode: string(domain.ErrorCode(err)), Message: red.String(err.Error())}), nil
	}
	log.InfoContext(ctx, "tool call finished", slog.String("tool", spec.Name), slog.String("run_id", rec.RunID),
		slog.String("status", string(rec.Status)))
	return result(toolspec.NewResult(rec, s.takeover(rec))), nil
}

// takeover is where a person takes a NEEDS_HUMAN run over.
func (s *Server) takeover(rec *domain.RunRecord) string {
	if s.cfg.ConsoleURL == "" || rec.Status != domain.StatusNeedsHuman {
		return ""
	}
	return strings.TrimRight(s.cfg.ConsoleURL, "/") + "/runs/" + rec.RunID
}

// progress reports each finished step to a client that sent a progress
// token; nil when it sent none.
func progress(ctx context.Context, req *mcp.CallToolRequest, log *slog.Logger) func(domain.StepResult) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	n := 0
	return func(st domain.StepResult) {
		n++
		p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: fmt.Sprintf("step %s: %s", st.ID, st.Status)}
		if err := req.Session.NotifyProgress(ctx, p); err != nil {
			log.WarnContext(ctx, "progress notification dropped", slog.Any("error", err))
		}
	}
}

// refuseInput records a call whose arguments fall outside the input
// schema as a FAILED INPUT_INVALID run, with no session opened: a signed
// bundle like any run's (run_started with the declared inputs as given, a
// sensitive one as a keyed digest; run_refused naming the inputs check;
// run_finished; the record; manifest and signature) and its index row
// with the bundle's anchor (invariant 18).
func (s *Server) refuseInput(ctx context.Context, l *capability.Loaded, runID string, red *redact.Redactor, raw any, why error) (*domain.RunRecord, error) {
	now := s.cfg.Now().UTC()
	at := now.Format(time.RFC3339Nano)
	inputs, sensitive := givenInputs(l, raw)
	for _, name := range sensitive {
		red.RegisterLiteral(fmt.Sprint(inputs[name]))
	}
	msg := why.Error()
	if de, ok := why.(*domain.Error); ok && de.Message != "" {
		msg = de.Message
	}
	rec := evidence.RedactRecord(&domain.RunRecord{SchemaVersion: 1, RunID: runID, Capability: l.Capability.Ref(), ContentHash: l.Hash,
		Status: domain.StatusFailed, ExitCode: domain.StatusFailed.ExitCode(), FailureCode: domain.CodeInputInvalid, Message: msg,
		StartedAt: at, FinishedAt: at, Steps: []domain.StepResult{}, BaseURL: s.cfg.BaseURL}, red)
	gate := s.cfg.Catalog.Gate(catalog.RunParams{Unattended: true})
	var dir string
	if s.cfg.DataDir != "" {
		var a evidence.Anchor
		var err error
		dir, a, err = evidence.WriteRefusal(s.cfg.DataDir, red, evidence.Refusal{Record: rec, Inputs: inputs, Sensitive: sensitive,
			Check: evidence.CheckInputs, At: now})
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", runID, err)
		}
		gate.Anchor(a.ChainHead, a.Signature)
	}
	if err := gate.Unstarted(ctx, l, rec, dir); err != nil {
		return nil, err
	}
	return rec, nil
}

// givenInputs are the call's arguments that name a declared input (an
// undeclared one is not recorded: it may hold anything), and the names of
// the sensitive ones among them.
func givenInputs(l *capability.Loaded, raw any) (map[string]any, []string) {
	var args map[string]any
	switch a := raw.(type) {
	case map[string]any:
		args = a
	case json.RawMessage:
		_ = json.Unmarshal(a, &args)
	}
	in := map[string]any{}
	var sensitive []string
	for name, v := range args {
		spec := l.Capability.Input(name)
		if spec == nil {
			continue
		}
		in[name] = v
		if spec.Sensitive {
			sensitive = append(sensitive, name)
		}
	}
	return in, sensitive
}
