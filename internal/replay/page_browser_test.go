package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// pageWorld is one Chromium and one test server on 127.0.0.1: the world
// of the tests that replay a small capability against a page of their own.
type pageWorld struct {
	url string
	br  *browser.Browser
}

// newPageWorld serves h and launches Chromium, both closed at the end of
// the test.
func newPageWorld(t *testing.T, h http.HandlerFunc) *pageWorld {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	br, err := browser.Launch(context.Background(), browser.Options{})
	if err != nil {
		t.Fatalf("launch Chromium: %v", err)
	}
	t.Cleanup(func() { _ = br.Close() })
	return &pageWorld{url: srv.URL, br: br}
}

// staticPage serves html at / (and nothing else: no favicon request is
// counted as a load).
func staticPage(html string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, html)
	}
}

// run parses the capability yaml, replays it on a fresh session against
// the world's server, and returns the record and the run's bundle.
func (w *pageWorld) run(t *testing.T, yaml, id string) (*domain.RunRecord, string) {
	t.Helper()
	l, err := capability.Parse(id+".yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := w.br.NewSession(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	dir := t.TempDir()
	rec, err := replay.Run(t.Context(), replay.Options{Capability: l, BaseURL: w.url, Surface: sess,
		Redactor: redact.New(), RunID: id, DataDir: dir})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return rec, filepath.Join(dir, "runs", id)
}
