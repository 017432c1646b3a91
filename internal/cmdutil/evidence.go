package cmdutil

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/evstore"
	"github.com/cuahq/cua/internal/launch"
)

// EvidenceUsage is --evidence's help.
const EvidenceUsage = "evidence store URL: file://DIR (default <data-dir>/runs) or s3://BUCKET?endpoint=…&region=…&s3ForcePathStyle=true (credentials: AWS environment)"

// OpenEvidence opens the store --evidence names ("" is <data-dir>/runs); a
// bad URL is a FlagError.
func OpenEvidence(ctx context.Context, rawURL, dataDir string) (*evstore.Store, error) {
	s, err := evstore.Open(ctx, rawURL, dataDir)
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	return s, nil
}

// PublishEvidenceFlag adds --evidence to a command that writes runs: while
// it runs, every bundle closed under its data directory (--data-dir, else
// $CUA_DATA_DIR or .cua) is published to the store. Call it after the
// command's other flags; it wraps RunE.
func PublishEvidenceFlag(f *Factory, cmd *cobra.Command) {
	var rawURL string
	cmd.Flags().StringVar(&rawURL, "evidence", "", EvidenceUsage)
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if rawURL == "" {
			return run(c, args)
		}
		var flagDir string
		if fl := c.Flags().Lookup("data-dir"); fl != nil {
			flagDir = fl.Value.String()
		}
		root := launch.DataDir(flagDir, f.Getenv)
		st, err := OpenEvidence(c.Context(), rawURL, root)
		if err != nil {
			return err
		}
		defer st.Close()
		defer evidence.PublishTo(root, st)()
		return run(c, args)
	}
}
