package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// postThenNextPage posts once (the server counts posts), shows "Posted"
// and a Next button on the same URL; the first Next shows a passing
// notice instead of finishing, the second finishes.
const postThenNextPage = `<!doctype html><html><head><title>Post</title></head><body>
<h1>Post a record</h1>
<button id="post" onclick="fetch('/post', {method: 'POST'}).then(() => { document.getElementById('posted').hidden = false; })">Post</button>
<div id="posted" hidden><p>Posted</p>
<button onclick="if (window.nexts = (window.nexts || 0) + 1, window.nexts === 1) { const w = document.getElementById('wait'); w.hidden = false; setTimeout(() => { w.hidden = true; }, 400); } else { document.getElementById('done').hidden = false; }">Next</button></div>
<p id="wait" hidden>Please wait</p>
<p id="done" hidden>Done</p>
</body></html>`

const postThenNext = `schema_version: 1
id: test.post_then_next
version: 1.0.0
title: Post, then go on
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: elevated
steps:
  - id: post
    action: click
    target: {role: button, name: Post}
    risk: elevated
    postcondition:
      text_present: {text: Posted}
  - id: next
    action: click
    target: {role: button, name: Next}
    postcondition:
      text_present: {text: Done}
recovery:
  - id: please_wait
    when:
      text_present: {text: Please wait}
    remedy: wait
    backoff: {initial_ms: 800, factor: 1, max_ms: 800}
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 10
  max_duration_ms: 30000
`

// TestReanchorNeverRepeatsAnElevatedStep: after a remedy the engine goes
// back to the earliest step whose document shows again, but never past a
// step that must not repeat. Here the elevated Post and the Next that
// met a passing notice share one URL: the run resumes at Next, and the
// server saw one post, not two.
func TestReanchorNeverRepeatsAnElevatedStep(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, postThenNextPage)
	}))
	t.Cleanup(srv.Close)
	br, err := browser.Launch(context.Background(), browser.Options{})
	if err != nil {
		t.Fatalf("launch Chromium: %v", err)
	}
	t.Cleanup(func() { _ = br.Close() })
	l, err := capability.Parse("post_then_next.yaml", []byte(postThenNext))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := br.NewSession(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	rec, err := replay.Run(t.Context(), replay.Options{Capability: l, BaseURL: srv.URL, Surface: sess,
		Redactor: redact.New(), RunID: "post", DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if rec.Status != domain.StatusSuccess || rec.RecoveryAttempts != 1 {
		t.Fatalf("status %s (%s: %s), %d recoveries; want SUCCESS after one", rec.Status, rec.FailureCode, rec.Message, rec.RecoveryAttempts)
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("the server saw %d posts, want 1: the elevated step ran again after the remedy", n)
	}
}
