package replaycmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
	"github.com/cuahq/cua/internal/launch"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// bindEngine adds --engine (default $CUA_ENGINE) to cua replay.
func bindEngine(f *cmdutil.Factory, cmd *cobra.Command, o *replayOptions) {
	cmd.Flags().StringVar(&o.Engine, "engine", f.Getenv("CUA_ENGINE"), "hand the run to a running cua serve at this URL ($CUA_ENGINE): "+
		"its warm browsers and signed-on sessions; token from CUA_PRINCIPAL_TOKEN, else <data-dir>/serve.token")
}

// runEngine checks flags, file and token before any request, hands the run
// to the engine and prints its record as a local run does.
func runEngine(ctx context.Context, o *replayOptions, fl *pflag.FlagSet, token func() (string, error)) error {
	if err := api.CheckURL(o.Engine); err != nil {
		return cmdutil.FlagErrorf("--engine %v", err)
	}
	var err error
	fl.Visit(func(f *pflag.Flag) {
		if ok := map[string]bool{"engine": true, "input": true, "base-url": true, "release-gate": true, "json": true,
			"unattended": true, "idempotency-key": true, "data-dir": true, "evidence-level": true}[f.Name]; !ok && err == nil {
			err = cmdutil.FlagErrorf("--%s: not with --engine (the engine's own browser, secrets, evidence and approvals apply)", f.Name)
		}
	})
	a := jobs.RunArgs{Ref: o.File, BaseURL: o.Run.BaseURL, ReleaseGates: o.Run.ReleasedGates, Unattended: o.Gate.Unattended, IdempotencyKey: o.Gate.IdempotencyKey, Evidence: o.Run.EvidenceLevel}
	if err != nil || cmdutil.HTTPURL("--base-url", a.BaseURL) != nil {
		return errors.Join(err, cmdutil.HTTPURL("--base-url", a.BaseURL))
	}
	if a.Inputs, err = cmdutil.PairsFlag("--input", o.Inputs); err != nil {
		return err
	}
	api.SplitSecrets(&a)
	hash := ""
	if catalog.IsFile(o.File) {
		l, err := capability.LoadContext(ctx, o.File)
		if err != nil || !l.Sealed {
			return errors.Join(err, fmt.Errorf("%s: a sealed capability is required (cua capability seal)", o.File))
		}
		a.Ref, hash = l.Capability.Ref(), l.Hash
	}
	c := api.Client{URL: o.Engine}
	if err = a.Validate(); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	} else if token != nil {
		c.Token, err = token()
	}
	if err == nil && c.Token == "" {
		c.Token, err = api.ServeTokenIn(launch.DataDir(o.Run.DataDir, o.Env))
	}
	if err != nil {
		return fmt.Errorf("--engine: %w", err)
	}
	res, err := c.Run(ctx, a, hash)
	if si := (*api.SensitiveInput)(nil); errors.As(err, &si) {
		return cmdutil.FlagErrorf("--input %s: %v", si.Name, err)
	} else if err != nil {
		return fmt.Errorf("--engine %s: %w", o.Engine, err)
	}
	var rec domain.RunRecord
	if err = json.Unmarshal(res.Record, &rec); err != nil {
		return fmt.Errorf("--engine %s: job %d left no run record here (%s; a worker elsewhere): %w", o.Engine, res.Job.ID, res.Job.State, err)
	}
	return o.print(&rec)
}
