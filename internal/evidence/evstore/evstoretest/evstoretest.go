// Package evstoretest starts a real S3-protocol server for tests: gofakes3
// over HTTP on 127.0.0.1, spoken to by the real AWS SDK client that
// evstore's s3:// driver uses.
package evstoretest

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // registers s3://
)

// Server is an in-process S3 server with one bucket.
type Server struct {
	// URL is the --evidence URL of the bucket.
	URL     string
	Bucket  string
	backend *s3mem.Backend
}

// Start starts the server with bucket "evidence" for t's lifetime and sets
// the AWS environment the SDK reads its credentials from.
func Start(t testing.TB) *Server {
	t.Helper()
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	if err := backend.CreateBucket("evidence"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test-access-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret-key")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return &Server{URL: "s3://evidence?endpoint=" + srv.URL + "&region=us-east-1&s3ForcePathStyle=true",
		Bucket: "evidence", backend: backend}
}

// Put overwrites object key of the bucket through the S3 protocol (a
// tamperer with store access).
func (s *Server) Put(t testing.TB, key string, data []byte) {
	t.Helper()
	b, err := blob.OpenBucket(context.Background(), s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(context.Background(), key, data, nil); err != nil {
		t.Fatal(err)
	}
}

// Get reads object key of the bucket.
func (s *Server) Get(t testing.TB, key string) []byte {
	t.Helper()
	obj, err := s.backend.GetObject(s.Bucket, key, nil)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer obj.Contents.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(obj.Contents); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
