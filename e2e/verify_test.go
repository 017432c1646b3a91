package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/mockapp"
)

// TestVerifyRealRun replays the lookup with the real binary (given by an
// absolute path), verifies its
// bundle (share-ready, with the sign-on secrets as canaries), then flips
// one byte of one event and sees verify fail naming the broken link.
func TestVerifyRealRun(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	creds := []string{"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}
	// An absolute capability path, as a user types it: its prerequisite's
	// file must not put a host path into the bundle.
	capFile, err := filepath.Abs(filepath.Join(examples, lookup+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A deployment key: an unsigned bundle is never share-ready.
	if k := runBin(t, nil, "keys", "init", "--data-dir", b.dataDir); k.code != 0 || !strings.HasPrefix(k.stdout, "cua-ed25519:") {
		t.Fatalf("keys init: exit %d\n%s%s", k.code, k.stdout, k.stderr)
	}
	r := runBin(t, creds, "replay", capFile, "-i", "member_id=12345",
		"--base-url", b.app.URL(), "--data-dir", b.dataDir, "--json")
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec.Status != domain.StatusSuccess {
		t.Fatalf("replay: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	v := runBin(t, creds, "verify", rec.RunID, "--data-dir", b.dataDir, "--json")
	var rep evidence.Report
	if err := json.Unmarshal([]byte(v.stdout), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s%s", err, v.stdout, v.stderr)
	}
	if v.code != 0 || !rep.ShareReady || !rep.ChainOK || !rep.ManifestOK || rep.Events == 0 || rep.Signature != evidence.SigOK {
		t.Fatalf("untouched run: exit %d %+v", v.code, rep)
	}
	t.Logf("cua verify --json:\n%s", v.stdout)
	// The lookup's default evidence (decisive): the screens its three
	// outputs were read from and its final screen, and every step's
	// observation digest.
	if e := rep.Evidence; e == nil || e.Level != "decisive" || e.Screenshots != 4 || e.Reasons[evidence.ReasonOutput] != 3 ||
		e.Reasons[evidence.ReasonFinal] != 1 || e.ObservationDigests != len(rec.Steps) {
		t.Errorf("evidence kept: %+v (%d steps)", rep.Evidence, len(rec.Steps))
	}
	if text := runBin(t, creds, "verify", rec.RunID, "--data-dir", b.dataDir); !strings.Contains(text.stdout, "screenshots: 4 (output 3, final 1); observation digests: ") {
		t.Errorf("verify prints no evidence summary:\n%s", text.stdout)
	}

	events := filepath.Join(b.dataDir, "runs", rec.RunID, "events.jsonl")
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"seq":3`), []byte(`"seq":4`), 1)
	if err := os.WriteFile(events, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := runBin(t, creds, "verify", filepath.Join(b.dataDir, "runs", rec.RunID))
	if bad.code != 1 || !strings.Contains(bad.stdout, "share_ready: false") || !strings.Contains(bad.stdout, "first broken link at line 3") {
		t.Fatalf("edited event: exit %d\n%s%s", bad.code, bad.stdout, bad.stderr)
	}
	if missing := runBin(t, nil, "verify", "no-such-run", "--data-dir", b.dataDir); missing.code != 1 || !strings.Contains(missing.stderr, `RUN "no-such-run"`) {
		t.Errorf("unknown run: exit %d %s", missing.code, missing.stderr)
	}
}
