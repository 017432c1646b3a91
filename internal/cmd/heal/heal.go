package healcmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/heal"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/secret"
)

// options are the flags the subcommands share.
type options struct {
	IO    *cmdutil.IOStreams
	Env   func(string) string
	Store launch.StoreOptions
	JSON  bool
	As    string
}

// NewCmdHeal builds `cua heal`.
func NewCmdHeal(f *cmdutil.Factory) *cobra.Command {
	o := &options{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{Use: "heal", Short: "Review, evaluate, approve and roll back heal proposals",
		Long: cmdutil.Help(helpHeal, false), Example: cmdutil.Help(helpHeal, true)}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.Store.DB, "db", "", "PostgreSQL URL (default $CUA_DB, else SQLite at <data-dir>/cua.db)")
	pf.StringVar(&o.Store.DataDir, "data-dir", "", "data directory (default $CUA_DATA_DIR or .cua)")
	pf.BoolVar(&o.JSON, "json", false, "print JSON")
	var capID string
	list := &cobra.Command{Use: "list", Short: "List heal proposals, oldest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.with(cmd.Context(), func(ctx context.Context, svc *heal.Service, _ *catalog.Catalog) error {
				ps, err := svc.List(ctx, capID)
				if err != nil || o.JSON {
					return o.json(map[string]any{"proposals": ps}, err)
				}
				return heal.WriteList(o.IO.Out, ps)
			})
		}}
	list.Flags().StringVar(&capID, "capability", "", "only proposals of this capability id")
	show := o.one("show ID", "Show a proposal: evidence, diff, eval, approval, canary and history", func(ctx context.Context, svc *heal.Service, p *heal.Proposal) error {
		hist, err := svc.History(ctx, p.ID)
		if err != nil || o.JSON {
			return o.json(map[string]any{"proposal": p, "history": hist}, err)
		}
		return heal.WriteProposal(o.IO.Out, p, hist)
	})
	diff := o.one("diff ID", "Show the semantic diff of a proposal against its base", func(_ context.Context, _ *heal.Service, p *heal.Proposal) error {
		if o.JSON {
			return o.json(map[string]any{"changes": p.Changes, "refused": p.Refused, "state": p.State}, nil)
		}
		return heal.WriteDiff(o.IO.Out, p)
	})
	cmd.AddCommand(list, show, diff, o.evalCmd(), o.approveCmd(), o.rejectCmd(), o.rollbackCmd())
	return cmd
}

// with opens the store and the catalog and runs fn with a heal service.
func (o *options) with(ctx context.Context, fn func(context.Context, *heal.Service, *catalog.Catalog) error) error {
	o.Store.DataDir = launch.DataDir(o.Store.DataDir, o.Env)
	cat, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := heal.Open(st, cat, nil)
	if err != nil {
		return err
	}
	return fn(ctx, svc, cat)
}

// one builds a subcommand over one proposal.
func (o *options) one(use, short string, fn func(context.Context, *heal.Service, *heal.Proposal) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: cmdutil.ExactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.with(cmd.Context(), func(ctx context.Context, svc *heal.Service, _ *catalog.Catalog) error {
				p, err := svc.Get(ctx, args[0])
				if err != nil {
					return err
				}
				return fn(ctx, svc, p)
			})
		}}
}

func (o *options) json(v any, err error) error {
	if err != nil {
		return err
	}
	return cmdutil.WriteJSON(o.IO.Out, v)
}

// asFlag adds the required --as PRINCIPAL.
func (o *options) asFlag(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&o.As, "as", "", "the principal who "+what+" (required)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if o.As == "" {
			return cmdutil.FlagErrorf("--as: required: name the principal who %s", what)
		}
		return nil
	}
}

func (o *options) approveCmd() *cobra.Command {
	canary := 0
	cmd := &cobra.Command{Use: "approve ID", Short: "Approve an evaluated proposal; its draft goes active as a canary",
		Args: cmdutil.ExactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if canary < 1 {
				return cmdutil.FlagErrorf("--canary %d: want at least 1 run", canary)
			}
			return o.with(cmd.Context(), func(ctx context.Context, svc *heal.Service, _ *catalog.Catalog) error {
				p, err := svc.Approve(ctx, args[0], o.As, canary)
				if err != nil {
					return err
				}
				fmt.Fprintf(o.IO.Out, "approved %s by %s (%s -> %s)\n%s@active is %s, a canary of %d run(s); the previous version is %s\n",
					p.ID, p.Approval.By, p.Approval.OldHash, p.Approval.NewHash, p.CapabilityID, p.Version, p.Canary.Runs, p.Approval.Previous)
				return nil
			})
		}}
	cmd.Flags().IntVar(&canary, "canary", heal.DefaultCanaryRuns, "how many runs of ID@active are the canary")
	o.asFlag(cmd, "approves")
	return cmd
}

func (o *options) rejectCmd() *cobra.Command {
	reason := ""
	cmd := &cobra.Command{Use: "reject ID", Short: "Reject a proposal that never went active", Args: cmdutil.ExactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return cmdutil.FlagErrorf("--reason: required: say why the proposal is rejected")
			}
			return o.with(cmd.Context(), func(ctx context.Context, svc *heal.Service, _ *catalog.Catalog) error {
				p, err := svc.Reject(ctx, args[0], o.As, reason)
				if err == nil {
					fmt.Fprintf(o.IO.Out, "rejected %s (%s)\n", p.ID, p.Ref())
				}
				return err
			})
		}}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	o.asFlag(cmd, "rejects")
	return cmd
}

func (o *options) rollbackCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rollback ID", Short: "Restore the version that was active before a proposal's approval",
		Args: cmdutil.ExactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.with(cmd.Context(), func(ctx context.Context, svc *heal.Service, _ *catalog.Catalog) error {
				p, back, err := svc.Rollback(ctx, args[0], o.As)
				if err == nil {
					fmt.Fprintf(o.IO.Out, "rolled back %s: %s@active is %s again\n", p.Ref(), p.CapabilityID, back.Version)
				}
				return err
			})
		}}
	o.asFlag(cmd, "rolls back")
	return cmd
}

// evalOptions are eval's own flags.
type evalOptions struct {
	baseURL, drift, browser, secrets string
}

func (o *options) evalCmd() *cobra.Command {
	e := &evalOptions{}
	cmd := &cobra.Command{Use: "eval ID", Short: "Run a proposal's draft against MemberDesk's drift and fault batteries",
		Args: cmdutil.ExactArgs(1, "one proposal ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.HTTPURL("--base-url", e.baseURL); err != nil {
				return err
			}
			return o.with(cmd.Context(), func(ctx context.Context, svc *heal.Service, cat *catalog.Catalog) error {
				return o.eval(ctx, svc, cat, args[0], e)
			})
		}}
	fl := cmd.Flags()
	fl.StringVar(&e.baseURL, "base-url", "http://127.0.0.1:8811", "base URL of MemberDesk (cua mockapp)")
	fl.StringVar(&e.drift, "cause", "", "the drift that caused the proposal, KIND:CHANGE:SEED (default: the drift MemberDesk shows now)")
	fl.StringVar(&e.browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	fl.StringVar(&e.secrets, "secrets", "", "JSON file of secret values (mode 0600)")
	o.asFlag(cmd, "evaluates")
	return cmd
}

// eval runs the batteries and records the result; a failed eval exits 1.
func (o *options) eval(ctx context.Context, svc *heal.Service, cat *catalog.Catalog, id string, e *evalOptions) error {
	p, err := svc.Get(ctx, id)
	if err != nil {
		return err
	}
	l, err := p.Loaded(ctx)
	if err != nil {
		return err
	}
	app := mockapp.NewClient(e.baseURL, nil)
	cause, err := causeOf(ctx, app, e.drift)
	if err != nil {
		return err
	}
	secrets, err := secret.NewStore(o.Env, e.secrets)
	if err != nil {
		return err
	}
	red := redact.New()
	logger := cmdutil.NewLogger(o.IO.ErrOut, red)
	lo := launch.Options{Kind: l.Capability.Surface, BaseURL: e.baseURL, AllowedDomains: l.Capability.Policy.AllowedDomains, Logger: logger, Browser: e.browser}
	ln := launch.New(lo)
	defer ln.Close()
	dataDir := o.Store.DataDir
	run := func(ctx context.Context, l *capability.Loaded, inputs map[string]string) (*domain.RunRecord, error) {
		r := replay.Options{Capability: l, Inputs: inputs, BaseURL: e.baseURL, Secrets: secrets, Redactor: red,
			Logger: logger, RunID: pipeline.NewRunID(), DataDir: dataDir}
		return pipeline.Replay(ctx, pipeline.ReplayParams{Run: r, Library: cat.Library(ctx), LibraryDir: "-", Open: ln.Open})
	}
	ev, err := heal.Evaluate(ctx, app, l, heal.Batteries(cause), run, o.As)
	if err != nil {
		return err
	}
	p, err = svc.RecordEval(ctx, id, ev)
	if err != nil {
		return err
	}
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, p.Eval)
	} else {
		err = heal.WriteEval(o.IO.Out, p.Eval)
	}
	if err == nil && !p.Eval.Passed {
		return &cmdutil.ExitError{Code: 1}
	}
	return err
}

// causeOf parses --cause KIND:CHANGE:SEED, or asks MemberDesk which drift
// it shows now (nil when none).
func causeOf(ctx context.Context, app *mockapp.Client, spec string) (*mockapp.DriftSpec, error) {
	if spec == "" {
		st, err := app.Drift(ctx)
		if err != nil {
			return nil, fmt.Errorf("--base-url: ask MemberDesk for its drift: %w", err)
		}
		if st.Drift == nil {
			return nil, nil
		}
		return &mockapp.DriftSpec{Kind: st.Drift.Kind, Change: st.Drift.Change, Seed: st.Drift.Seed}, nil
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		return nil, cmdutil.FlagErrorf("--cause %q: want KIND:CHANGE:SEED, e.g. semantic:rename_search_button:3", spec)
	}
	seed, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return nil, cmdutil.FlagErrorf("--cause %q: seed %q is not a number", spec, parts[2])
	}
	return &mockapp.DriftSpec{Kind: parts[0], Change: parts[1], Seed: seed}, nil
}
