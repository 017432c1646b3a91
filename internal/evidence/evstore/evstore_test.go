package evstore_test

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/evstore"
	"github.com/cuahq/cua/internal/evidence/evstore/evstoretest"
	"github.com/cuahq/cua/internal/evidence/signkey"
)

// refuse writes a signed refused run's bundle under root, published to st.
func refuse(t *testing.T, st *evstore.Store, root, id string) string {
	t.Helper()
	defer evidence.PublishTo(root, st)()
	rec := &domain.RunRecord{RunID: id, Capability: "test.cap@1.0.0", ContentHash: "sha256:abc", BaseURL: "http://127.0.0.1:1",
		Status: domain.StatusFailed, FailureCode: domain.CodeApprovalRequired, Message: "no approval covers the run"}
	dir, _, err := evidence.WriteRefusal(root, nil, evidence.Refusal{Record: rec, Inputs: map[string]any{"amount": "5"}, Check: evidence.CheckApproval})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPublishFetchVerifyOverS3: two data roots sharing a deployment key
// publish refused runs to one bucket of a real S3-protocol server; the
// store lists both, a fetched bundle verifies with the key, and a bundle
// changed in the store fails.
func TestPublishFetchVerifyOverS3(t *testing.T) {
	ctx := context.Background()
	s3 := evstoretest.Start(t)
	a, b := t.TempDir(), t.TempDir()
	if _, _, err := signkey.Init(a, false); err != nil {
		t.Fatal(err)
	}
	key, _, err := signkey.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(signkey.Path(b)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(signkey.Path(b), []byte(signkey.FormatPrivate(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := evstore.Open(ctx, s3.URL, a)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	refuse(t, st, a, "run-a")
	refuse(t, st, b, "run-b")
	ids, err := st.IDs(ctx)
	if err != nil || !slices.Equal(ids, []string{"run-a", "run-b"}) {
		t.Fatalf("IDs = %v, %v; want both workers' runs", ids, err)
	}
	pub := key.Public().(ed25519.PublicKey)
	dir, err := st.Fetch(ctx, "run-b", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if rep := evidence.VerifyDeployment(dir, pub, nil); !rep.ShareReady || rep.Signature != evidence.SigOK {
		t.Fatalf("fetched run-b: share_ready %v signature %s reasons %v", rep.ShareReady, rep.Signature, rep.Reasons)
	}
	rec := s3.Get(t, "runs/run-a/record.json")
	s3.Put(t, "runs/run-a/record.json", []byte(strings.Replace(string(rec), "no approval", "an approval", 1)))
	dir, err = st.Fetch(ctx, "run-a", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if rep := evidence.VerifyDeployment(dir, pub, nil); rep.ShareReady {
		t.Fatalf("a bundle changed in the store verified share_ready")
	}
	mirror := t.TempDir()
	if err := st.Mirror(ctx, mirror); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"run-a", "run-b"} {
		if _, err := os.Stat(filepath.Join(mirror, id, evidence.SignatureFile)); err != nil {
			t.Fatalf("mirror lacks %s: %v", id, err)
		}
	}
}

// TestPublishFailureKeepsTheRun: a store that refuses the publish leaves
// the local bundle whole and signed, notes the failure beside the runs
// and never fails the run's Close.
func TestPublishFailureKeepsTheRun(t *testing.T) {
	ctx := context.Background()
	s3 := evstoretest.Start(t)
	root := t.TempDir()
	if _, _, err := signkey.Init(root, false); err != nil {
		t.Fatal(err)
	}
	st, err := evstore.Open(ctx, strings.Replace(s3.URL, "s3://evidence", "s3://no-such-bucket", 1), root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := refuse(t, st, root, "run-x")
	if rep := evidence.Verify(dir, nil); !rep.ShareReady {
		t.Fatalf("local bundle after a failed publish: %v", rep.Reasons)
	}
	note, err := os.ReadFile(filepath.Join(root, "runs", evidence.UnpublishedDir, "run-x.txt"))
	if err != nil || !strings.Contains(string(note), "publish run run-x") {
		t.Fatalf("unpublished note = %q, %v", note, err)
	}
}

// TestOpenRefusesBadURLs names --evidence.
func TestOpenRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"ftp://x", "s3://", "file://", "::"} {
		if _, err := evstore.Open(context.Background(), u, t.TempDir()); err == nil || !strings.Contains(err.Error(), "--evidence") {
			t.Errorf("Open(%q) = %v; want an error naming --evidence", u, err)
		}
	}
}

// TestFileStore: the default is <data-dir>/runs, where bundles already
// are: publishing there copies nothing; another directory gets a copy.
func TestFileStore(t *testing.T) {
	ctx := context.Background()
	root, other := t.TempDir(), t.TempDir()
	def, err := evstore.Open(ctx, "", root)
	if err != nil || def.Dir() != filepath.Join(root, "runs") {
		t.Fatalf("default store %v, %v", def, err)
	}
	refuse(t, def, root, "run-1")
	st, err := evstore.Open(ctx, "file://"+other, root)
	if err != nil {
		t.Fatal(err)
	}
	refuse(t, st, root, "run-2")
	ids, err := st.IDs(ctx)
	if err != nil || !slices.Equal(ids, []string{"run-2"}) {
		t.Fatalf("file store IDs = %v, %v", ids, err)
	}
	dir, err := st.Fetch(ctx, "run-2", "")
	if err != nil || !evidence.Verify(dir, nil).ShareReady {
		t.Fatalf("file store run-2 at %s: %v", dir, err)
	}
}
