package replay_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/cuahq/cua/internal/domain"
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
	page := staticPage(postThenNextPage)
	w := newPageWorld(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			return
		}
		page(rw, r)
	})
	rec, _ := w.run(t, postThenNext, "post")
	if rec.Status != domain.StatusSuccess || rec.RecoveryAttempts != 1 {
		t.Fatalf("status %s (%s: %s), %d recoveries; want SUCCESS after one", rec.Status, rec.FailureCode, rec.Message, rec.RecoveryAttempts)
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("the server saw %d posts, want 1: the elevated step ran again after the remedy", n)
	}
}
