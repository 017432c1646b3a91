package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/evidence"
)

// ObserveURL is where `cua observe` serves the run library by default.
const ObserveURL = "http://127.0.0.1:8813/"

// ObserveCommand is the command that opens the run library of dataDir.
func ObserveCommand(dataDir string) string { return "cua observe --data-dir " + dataDir }

// runDirs lists the run directories under <dataDir>/runs (none when it does
// not exist yet).
func runDirs(dataDir string) (map[string]bool, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, "runs"))
	if os.IsNotExist(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			out[e.Name()] = true
		}
	}
	return out, nil
}

// verifyStage is the last stage: evidence.VerifyDeployment on every run
// directory the demo made (those under <data-dir>/runs that were not
// there before it started), with the demo's secrets as canaries and, when
// the deployment has a signing key, that key: each bundle's signature
// must verify with it. It passes only when every one is share_ready, and
// its detail says where to open the run library.
func (e *env) verifyStage(before map[string]bool) *Result {
	r := &Result{Stage: Stage{Name: "every run verifies share_ready", WantDispatches: -1}}
	now, err := runDirs(e.cfg.DataDir)
	if err != nil {
		return r.fail("%v", err)
	}
	var made []string
	for id := range now {
		if !before[id] {
			made = append(made, id)
		}
	}
	slices.Sort(made)
	if len(made) == 0 {
		return r.fail("the demo made no run under %s", filepath.Join(e.cfg.DataDir, "runs"))
	}
	canaries := []string{Operator, Password}
	key, err := evidence.DeploymentKey(e.cfg.DataDir)
	if err != nil {
		return r.fail("%v", err)
	}
	var bad []string
	for _, id := range made {
		rep := evidence.VerifyDeployment(filepath.Join(e.cfg.DataDir, "runs", id), key, canaries)
		if !rep.ShareReady {
			bad = append(bad, fmt.Sprintf("%s: %s", id, strings.Join(rep.Reasons, "; ")))
		}
	}
	if len(bad) > 0 {
		return r.fail("%d of %d runs are not share_ready: %s", len(bad), len(made), strings.Join(bad, " | "))
	}
	r.Pass = true
	checks := "chain, manifest, secret and path scans"
	if key != nil {
		checks = "signature, " + checks
	}
	r.Detail = fmt.Sprintf("%d of %d runs share_ready (%s); open the run library: %s, then %s",
		len(made), len(made), checks, ObserveCommand(e.cfg.DataDir), ObserveURL)
	return r
}
