package replay_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// checklistPage serves a checklist of names (in order): ticking one posts
// its name to /tick (the server keeps every tick) and shows its status
// as done.
type checklistPage struct {
	mu    sync.Mutex
	names []string
	ticks []string
	// banner, when set, shows "Connection lost" for 1.5s with the
	// second tick's status, 300ms after its post.
	banner bool
}

func (p *checklistPage) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.URL.Path {
	case "/tick":
		p.ticks = append(p.ticks, r.URL.Query().Get("name"))
		w.WriteHeader(http.StatusNoContent)
		return
	case "/":
	default:
		http.NotFound(w, r)
		return
	}
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Checklist</title></head><body><h1>Checklist</h1><ul>`)
	for i, n := range p.names {
		fmt.Fprintf(&b, `<li><input type="checkbox" id="c%d" data-name=%q onchange="tick(this)"><label for="c%d">%s</label>
<span id="s%d">%s: pending</span></li>`, i, n, i, n, i, n)
	}
	fmt.Fprintf(&b, `</ul><script>
var banner = %t, ticked = 0;
function tick(box) {
  ticked++;
  var n = ticked;
  fetch('/tick?name=' + encodeURIComponent(box.dataset.name)).then(function () {
    var show = function () {
      document.getElementById('s' + box.id.slice(1)).textContent = box.dataset.name + (box.checked ? ': done' : ': pending');
    };
    if (!banner || n !== 2) {
      show();
      return;
    }
    setTimeout(function () {
      show();
      var p = document.createElement('p');
      p.textContent = 'Connection lost';
      document.body.appendChild(p);
      setTimeout(function () { p.remove(); }, 1500);
    }, 300);
  });
}
</script></body></html>`, p.banner)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprint(w, b.String())
}

func (p *checklistPage) set(names ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.names, p.ticks = names, nil
}

func (p *checklistPage) ticked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ticks)
}

// tickByName ticks every name of the list input items, reading each
// item's status after its tick.
const tickByName = `schema_version: 1
id: test.tick_by_name
version: 1.0.0
title: Tick a checklist by name
surface: web
entrypoint: {url_pattern: "{base_url}/"}
risk: elevated
identity: {unarmed: the checklist page names no record}
inputs:
  - name: items
    type: array
    items: {type: string}
    max_items: 5
    min_items: 1
outputs:
  - name: statuses
    type: array
    pattern: done
    source: {step: tick_each.status}
steps:
  - id: tick_each
    for_each:
      input: items
      as: item
      steps:
        - id: tick
          action: click
          risk: elevated
          target: {role: checkbox, name: "{item}"}
          postcondition: {node_checked: {role: checkbox, name: "{item}"}}
        - id: status
          action: extract
          target: {role: text, name: {value: "^{item}: done$", match: regex}}
          transform: {regex: ": (done|pending)$"}
          into: statuses
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 10
  max_duration_ms: 30000
`

// TestForEachChecklistOnChromium (issue 24 item 3): a loop over a list
// input ticks each named item and nothing else, per iteration (records
// name tick_each[N].tick); a renamed, missing or doubled item halts at
// that iteration, never ticking another in its place.
func TestForEachChecklistOnChromium(t *testing.T) {
	page := &checklistPage{}
	w := newPageWorld(t, page.serve)
	l, err := capability.Parse("tick.yaml", []byte(tickByName))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, id, items string) *domain.RunRecord {
		t.Helper()
		sess, err := w.br.NewSession(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sess.Close() }()
		dir := t.TempDir()
		rec, err := replay.Run(t.Context(), replay.Options{Capability: l, BaseURL: w.url, Surface: sess,
			Inputs: map[string]string{"items": items}, Redactor: redact.New(), RunID: id, DataDir: dir,
			StepWait: 2 * time.Second})
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		return rec
	}
	stepIDs := func(rec *domain.RunRecord) []string {
		var ids []string
		for _, s := range rec.Steps {
			ids = append(ids, s.ID+"="+s.Status)
		}
		return ids
	}

	t.Run("ticks the named items, not the extra one", func(t *testing.T) {
		page.set("Alpha", "Beta", "Gamma (2%)")
		rec := run(t, "loop-ok", `["Alpha","Gamma (2%)"]`)
		if rec.Status != domain.StatusSuccess {
			t.Fatalf("%s (%s: %s), steps %v", rec.Status, rec.FailureCode, rec.Message, stepIDs(rec))
		}
		if got := page.ticked(); !slices.Equal(got, []string{"Alpha", "Gamma (2%)"}) {
			t.Errorf("server saw ticks %q, want Alpha and Gamma (2%%) only (Beta is not in the list)", got)
		}
		want := []string{"tick_each[0].tick=ok", "tick_each[0].status=ok", "tick_each[1].tick=ok", "tick_each[1].status=ok"}
		if got := stepIDs(rec); !slices.Equal(got, want) {
			t.Errorf("steps %v, want %v", got, want)
		}
		if got := fmt.Sprint(rec.Outputs["statuses"]); got != "[done done]" {
			t.Errorf("statuses = %s, want one per item: [done done]", got)
		}
	})
	for _, tc := range []struct {
		name, items string
		page        []string
		code        domain.FailureCode
		ticked      []string
		at          string
	}{
		{"a renamed item halts", `["Alpha","Beta"]`, []string{"Alpha", "Beta (renamed)"}, domain.CodeTargetNotFound, []string{"Alpha"}, "tick_each[1].tick"},
		{"a missing item halts", `["Alpha","Delta","Beta"]`, []string{"Alpha", "Beta"}, domain.CodeTargetNotFound, []string{"Alpha"}, "tick_each[1].tick"},
		// The first step is judged at the entrypoint: the run halts before
		// any step, naming it.
		{"a doubled item halts", `["Beta"]`, []string{"Beta", "Alpha", "Beta"}, domain.CodeTargetAmbiguous, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page.set(tc.page...)
			rec := run(t, "loop-drift", tc.items)
			if rec.Status == domain.StatusSuccess || rec.FailureCode != tc.code {
				t.Fatalf("%s (%s: %s); want %s", rec.Status, rec.FailureCode, rec.Message, tc.code)
			}
			if got := page.ticked(); !slices.Equal(got, tc.ticked) {
				t.Errorf("server saw ticks %q, want %q: never another item in place of the missing one", got, tc.ticked)
			}
			if tc.at == "" {
				if len(rec.Steps) != 0 || !strings.Contains(rec.Message, "tick_each[0].tick") {
					t.Errorf("steps %v, message %q: want none run and the message naming tick_each[0].tick", stepIDs(rec), rec.Message)
				}
				return
			}
			last := rec.Steps[len(rec.Steps)-1]
			if last.ID != tc.at || last.Status != "failed" {
				t.Errorf("last step %s=%s, want %s failed; steps %v", last.ID, last.Status, tc.at, stepIDs(rec))
			}
		})
	}
	t.Run("a list over max_items is refused before anything is sent", func(t *testing.T) {
		page.set("Alpha")
		rec := run(t, "loop-big", `["a","b","c","d","e","f"]`)
		if rec.FailureCode != domain.CodeInputInvalid || !strings.Contains(rec.Message, "items: 6 items, more than max_items 5") {
			t.Errorf("%s (%s: %s); want INPUT_INVALID naming items", rec.Status, rec.FailureCode, rec.Message)
		}
		if got := page.ticked(); len(got) != 0 {
			t.Errorf("ticks %q", got)
		}
	})
}
