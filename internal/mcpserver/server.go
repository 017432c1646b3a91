package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/toolspec"
)

// DefaultMaxSessions bounds concurrent calls when Config.MaxSessions is 0.
const DefaultMaxSessions = 4

// Catalog is the catalog as the server reads and runs it
// (*catalog.Catalog).
type Catalog interface {
	toolspec.Source
	Library(ctx context.Context) *catalog.Library
	Gate(p catalog.RunParams) *catalog.Gate
}

var _ Catalog = (*catalog.Catalog)(nil)

// Config configures a Server.
type Config struct {
	Catalog Catalog
	// Open returns what opens a fresh session for one call of capability
	// c: for a web capability one shared browser's Open (a new browser
	// context per call, launch.Launcher.Open), for a state capability a
	// state-contract session on its allowed origins. Required.
	Open func(c *domain.Capability) pipeline.Opener
	// BaseURL is the application every call runs against. Required.
	BaseURL string
	// DataDir roots the evidence tree (<DataDir>/runs/<run-id>/).
	DataDir string
	Secrets runtime.SecretSource
	// MaxSessions bounds the calls running at once; a call past it waits.
	MaxSessions int
	// ConsoleURL, when set, is where a NEEDS_HUMAN run is taken over
	// (<ConsoleURL>/runs/<run-id>).
	ConsoleURL string
	// Log receives each run's warnings and errors, through the run's own
	// redactor (so every secret and sensitive input it resolves); nil
	// logs nothing.
	Log io.Writer
	// Now is the clock approvals are judged with; time.Now when nil.
	Now func() time.Time
	// NewRunID makes run ids; pipeline.NewRunID when nil.
	NewRunID func() string
	// Version is reported to clients.
	Version string
}

// Server is the MCP server. It is safe for concurrent use.
type Server struct {
	cfg Config
	mcp *mcp.Server
	sem chan struct{}

	mu    sync.Mutex
	tools map[string]toolspec.MCPTool // registered, by name
}

// New validates cfg and returns a Server with no tools yet: [Server.Sync],
// [Server.Run] and [Server.Serve] read them from the catalog.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Catalog == nil:
		return nil, errors.New("mcpserver: a catalog is required")
	case cfg.Open == nil:
		return nil, errors.New("mcpserver: an opener is required")
	case cfg.BaseURL == "":
		return nil, errors.New("mcpserver: a base URL is required")
	case cfg.MaxSessions < 0:
		return nil, fmt.Errorf("mcpserver: max sessions %d is negative", cfg.MaxSessions)
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewRunID == nil {
		cfg.NewRunID = pipeline.NewRunID
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Server{cfg: cfg, sem: make(chan struct{}, cfg.MaxSessions), tools: map[string]toolspec.MCPTool{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "cua", Title: "cua: approved capabilities as tools", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: "Each tool replays an approved, sealed capability deterministically in a browser, with no model in the loop. " +
			"A BUSINESS_OUTCOME status is a normal answer; NEEDS_HUMAN means a person must take the run over."})
	s.mcp.AddReceivingMiddleware(s.syncFirst)
	return s, nil
}

// logger is a run's logger, redacted by the run's redactor.
func (s *Server) logger(red *redact.Redactor) *slog.Logger {
	return slog.New(redact.NewHandler(slog.NewTextHandler(s.cfg.Log, &slog.HandlerOptions{Level: slog.LevelWarn}), red))
}

// MCP returns the SDK server, to connect a transport of one's own.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// syncFirst re-reads the approved tools before every list and call, so a
// revoked approval is neither listed nor callable and a new one appears.
func (s *Server) syncFirst(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" || method == "tools/call" {
			if err := s.Sync(ctx); err != nil {
				return nil, err
			}
		}
		return next(ctx, method, req)
	}
}

// Sync makes the tool list the catalog's approved capabilities
// (toolspec.Approved): it adds new ones, replaces changed ones and removes
// those no longer approved.
func (s *Server) Sync(ctx context.Context) error {
	specs, err := toolspec.Approved(ctx, s.cfg.Catalog, s.cfg.Now(), nil)
	if err != nil {
		return fmt.Errorf("read approved capabilities: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := map[string]bool{}
	for _, spec := range specs {
		keep[spec.Name] = true
		t := spec.MCP()
		if old, ok := s.tools[spec.Name]; ok && reflect.DeepEqual(old, t) {
			continue
		}
		s.tools[spec.Name] = t
		s.mcp.AddTool(&mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Meta: mcp.Meta(t.Meta), Annotations: &mcp.ToolAnnotations{Title: t.Annotations.Title,
				ReadOnlyHint: t.Annotations.ReadOnlyHint, DestructiveHint: t.Annotations.DestructiveHint,
				IdempotentHint: t.Annotations.IdempotentHint, OpenWorldHint: t.Annotations.OpenWorldHint}},
			s.handler(spec))
	}
	var gone []string
	for name := range s.tools {
		if !keep[name] {
			gone = append(gone, name)
			delete(s.tools, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	return nil
}

// resolve re-reads the tool's version from the catalog (its bytes verified
// again) and checks it is still the content the tool was listed with.
func (s *Server) resolve(ctx context.Context, spec *toolspec.Spec) (*capability.Loaded, error) {
	l, _, err := s.cfg.Catalog.Resolve(ctx, spec.Capability)
	if err != nil {
		return nil, err
	}
	if l.Hash != spec.ContentHash {
		return nil, fmt.Errorf("%s now hashes to %s, listed as %s: %w", spec.Capability, l.Hash, spec.ContentHash, store.ErrImmutable)
	}
	return l, nil
}

// Run serves one client over t (mcp.StdioTransport for stdio) until it
// disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if err := s.Sync(ctx); err != nil {
		return err
	}
	return s.mcp.Run(ctx, t)
}

// result is a call's tool result: the structured content, the same JSON
// as text for clients that read only text, and IsError when the call gave
// no answer (FAILED, NEEDS_HUMAN).
func result(r toolspec.Result) *mcp.CallToolResult {
	text, _ := json.Marshal(r)
	return &mcp.CallToolResult{StructuredContent: r, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}},
		IsError: r.Status != domain.StatusSuccess && r.Status != domain.StatusBusinessOutcome}
}
