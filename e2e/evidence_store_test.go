package e2e

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence/evstore/evstoretest"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/mockapp"
)

// fleetKey makes one deployment signing key shared by the data dirs (each
// worker's copy) and returns its public half's file.
func fleetKey(t *testing.T, dirs ...string) string {
	t.Helper()
	if _, _, err := signkey.Init(dirs[0], false); err != nil {
		t.Fatal(err)
	}
	key, _, err := signkey.Load(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs[1:] {
		if err := os.MkdirAll(filepath.Dir(signkey.Path(d)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(signkey.Path(d), []byte(signkey.FormatPrivate(key)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pub := filepath.Join(t.TempDir(), "deployment.pub")
	if err := os.WriteFile(pub, []byte(signkey.FormatPublic(key.Public().(ed25519.PublicKey))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pub
}

// replayTo runs `cua replay` of the savings lookup with --evidence and
// returns the run record it printed.
func replayTo(t *testing.T, store, dataDir, baseURL string, flags ...string) *domain.RunRecord {
	t.Helper()
	creds := []string{"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}
	args := append([]string{"replay", filepath.Join(examples, lookup+".yaml"), "-i", "member_id=12345", "--json",
		"--base-url", baseURL, "--data-dir", dataDir, "--evidence", store}, flags...)
	r := runBin(t, creds, args...)
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("replay: exit %d, no record: %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	if r.code != 0 && rec.Status == domain.StatusSuccess || strings.Contains(r.stderr, "publish failed") {
		t.Fatalf("replay %s: exit %d\nstderr: %s", rec.Status, r.code, r.stderr)
	}
	return &rec
}

// TestFleetEvidenceStore: two workers (two data dirs sharing the
// deployment key) write runs through --evidence s3://… on a real
// S3-protocol server: one replay on real Chromium and MemberDesk, one
// refused before a browser opens. `cua observe --evidence` lists both
// workers' runs, `cua verify --evidence … RUN --key PUB` passes for each,
// and a bundle changed in the store fails.
func TestFleetEvidenceStore(t *testing.T) {
	s3 := evstoretest.Start(t)
	app := setup(t, mockapp.Options{})
	a, b := t.TempDir(), t.TempDir()
	pub := fleetKey(t, a, b)
	ran := replayTo(t, s3.URL, a, app.app.URL())
	refused := replayTo(t, s3.URL, b, app.app.URL(), "--unattended")
	if ran.Status != domain.StatusSuccess || refused.FailureCode != domain.CodeApprovalRequired {
		t.Fatalf("runs: %s %s, %s %s; want SUCCESS and APPROVAL_REQUIRED", ran.Status, ran.FailureCode, refused.Status, refused.FailureCode)
	}
	for _, id := range []string{ran.RunID, refused.RunID} {
		if got := s3.Get(t, "runs/"+id+"/manifest.sig"); len(got) == 0 {
			t.Fatalf("run %s: no manifest.sig in the store", id)
		}
	}
	observeLists(t, s3.URL, t.TempDir(), ran.RunID, refused.RunID)
	for _, id := range []string{ran.RunID, refused.RunID} {
		if r := runBin(t, nil, "verify", id, "--evidence", s3.URL, "--key", pub, "--data-dir", t.TempDir()); r.code != 0 || !strings.Contains(r.stdout, "share_ready: true") {
			t.Errorf("verify %s from the store: exit %d\n%s%s", id, r.code, r.stdout, r.stderr)
		}
	}
	key := "runs/" + refused.RunID + "/record.json"
	s3.Put(t, key, bytes.Replace(s3.Get(t, key), []byte("APPROVAL_REQUIRED"), []byte("INPUT_INVALID"), 1))
	r := runBin(t, nil, "verify", refused.RunID, "--evidence", s3.URL, "--key", pub, "--data-dir", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stdout, "share_ready: false") || !strings.Contains(r.stdout, "record.json") {
		t.Errorf("verify of a bundle changed in the store: exit %d, want 1 naming record.json\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, nil, "verify", "no-such-run", "--evidence", s3.URL, "--data-dir", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "no-such-run") {
		t.Errorf("verify of a run the store lacks: exit %d\n%s", r.code, r.stderr)
	}
	empty := t.TempDir()
	r = runBin(t, nil, "replay", filepath.Join(examples, lookup+".yaml"), "-i", "member_id=12345", "--data-dir", empty, "--evidence", "ftp://x")
	if entries, _ := os.ReadDir(empty); r.code == 0 || !strings.Contains(r.stderr, "--evidence") || len(entries) != 0 {
		t.Errorf("replay --evidence ftp://x: exit %d, %d entries written, stderr %q; want a refusal naming --evidence that writes nothing", r.code, len(entries), r.stderr)
	}
}

// observeLists runs `cua observe --evidence store` from a third data dir
// and waits until its history lists every id; then it stops the process.
func observeLists(t *testing.T, store, dataDir string, ids ...string) {
	t.Helper()
	cmd := exec.Command(binPath, "observe", "--evidence", store, "--data-dir", dataDir, "--addr", "127.0.0.1:0")
	cmd.Env = os.Environ()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	var body string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s := out.String()
		i := strings.Index(s, " at http://")
		if i < 0 {
			continue
		}
		url := strings.Fields(s[i+4:])[0]
		res, err := http.Get(url + "/history.json")
		if err != nil {
			continue
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		body = string(raw)
		all := res.StatusCode == http.StatusOK
		for _, id := range ids {
			all = all && strings.Contains(body, id)
		}
		if all {
			return
		}
	}
	t.Fatalf("observe --evidence never listed %v\nhistory: %s\noutput: %s", ids, body, out.String())
}
