package observer_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/observer"
	"github.com/cuahq/cua/internal/redact"
)

func historyIDs(tb testing.TB, b *testBundle, query string) []string {
	tb.Helper()
	res := b.get(tb, "/history.json"+query)
	if res.status != http.StatusOK {
		tb.Fatalf("history.json%s: %d %s", query, res.status, res.body)
	}
	var h observer.History
	if err := json.Unmarshal(res.body, &h); err != nil {
		tb.Fatal(err)
	}
	ids := []string{}
	for _, r := range h.Runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestLibraryServesEveryBundleShape: loopback serves every run, with or
// without screenshots, receipt, record or manifest, newest first.
func TestLibraryServesEveryBundleShape(t *testing.T) {
	t.Parallel()
	b := serve(t, library(t), observer.Exposure{}, "")
	if got, want := historyIDs(t, b, ""), []string{"r-tampered", "r-running", "r-plain", "r-ok"}; !slices.Equal(got, want) {
		t.Fatalf("history = %v, want %v", got, want)
	}
	ok := b.get(t, "/runs/r-ok")
	for _, want := range []string{"member.lookup@1.0.0", "/runs/r-ok/screenshots/step-001.png", "/runs/r-ok/screenshots/step-002.png",
		"Ada Lovelace", "completed", "share_ready", "lease epoch 1 → 2", "actor automation → human", "step_finished"} {
		if !contains(ok.body, want) {
			t.Errorf("run page r-ok lacks %q", want)
		}
	}
	plain := b.get(t, "/runs/r-plain")
	if plain.status != http.StatusOK || !contains(plain.body, "This run has no receipt.json.") || contains(plain.body, "<img") {
		t.Errorf("run page r-plain: %d, want a page with no receipt and no screenshot", plain.status)
	}
	gated := b.get(t, "/runs/r-tampered")
	for _, want := range []string{gateDecision, "Handoff gate", "stopped_at_gate", "stop_condition", "not share_ready", "record.json"} {
		if !contains(gated.body, want) {
			t.Errorf("run page r-tampered lacks %q", want)
		}
	}
	f, err := os.OpenFile(filepath.Join(b.dataDir, "runs", "r-running", "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":99,"at":"2026-`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	running := b.get(t, "/runs/r-running")
	if running.status != http.StatusOK || !contains(running.body, "RUNNING") || !contains(running.body, "manifest.json: missing") ||
		contains(running.body, "are not events") || !contains(running.body, "transfer@2.0.0") {
		t.Errorf("run page r-running: %d, want RUNNING with the missing manifest named", running.status)
	}
	shot := b.get(t, "/runs/r-ok/screenshots/step-002.png")
	if shot.status != http.StatusOK || shot.header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(shot.body), "\x89PNG") {
		t.Fatalf("screenshot: %d %s", shot.status, shot.header.Get("Content-Type"))
	}
}

// TestFilters: each query parameter narrows the index and history.json;
// a bad one is a 400 naming the field.
func TestFilters(t *testing.T) {
	t.Parallel()
	b := serve(t, library(t), observer.Exposure{}, "")
	tests := []struct {
		query string
		want  []string
	}{
		{"?status=needs_human", []string{"r-plain"}},
		{"?status=RUNNING", []string{"r-running"}},
		{"?capability=transfer", []string{"r-tampered", "r-running"}},
		{"?effects=sent", []string{"r-ok"}},
		{"?drift=yes", []string{"r-plain"}},
		{"?share=yes", []string{"r-plain", "r-ok"}},
		{"?share=no", []string{"r-tampered", "r-running"}},
		{"?receipt=completed", []string{"r-ok"}},
		{"?receipt=stopped_at_gate", []string{"r-tampered"}},
		{"?q=plain", []string{"r-plain"}},
		{"?q=member&status=SUCCESS", []string{"r-ok"}},
	}
	for _, tt := range tests {
		if got := historyIDs(t, b, tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("history%s = %v, want %v", tt.query, got, tt.want)
		}
		page := b.get(t, "/"+tt.query)
		for _, id := range tt.want {
			if !contains(page.body, `href="/runs/`+id+`"`) {
				t.Errorf("index%s lacks %s", tt.query, id)
			}
		}
	}
	for _, q := range []string{"?status=MAYBE", "?effects=lots", "?colour=red", "?drift=perhaps"} {
		field := strings.SplitN(strings.TrimPrefix(q, "?"), "=", 2)[0]
		for _, path := range []string{"/", "/history.json"} {
			res := b.get(t, path+q)
			if res.status != http.StatusBadRequest || !contains(res.body, field) {
				t.Errorf("%s%s: %d, want 400 naming %s", path, q, res.status, field)
			}
		}
	}
}

// TestSecurityHeaders: every answer, whatever its status, carries the
// policy headers, and no page holds a script.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := serve(t, library(t), observer.Exposure{}, "")
	for _, path := range []string{"/", "/runs/r-ok", "/history.json", "/style.css", "/runs/r-ok/screenshots/step-001.png", "/runs/nope", "/?status=x"} {
		res := b.get(t, path)
		h := res.header
		csp := h.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "img-src 'self'", "style-src 'self'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, d)
			}
		}
		if strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q allows script or inline", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, h)
		}
		if contains(res.body, "<script") || contains(res.body, " onload=") || contains(res.body, "javascript:") {
			t.Errorf("%s: body holds script", path)
		}
	}
}

// TestNonGetIs405: only GET and HEAD are answered.
func TestNonGetIs405(t *testing.T) {
	t.Parallel()
	b := serve(t, library(t), observer.Exposure{}, "")
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "PROPFIND"} {
		for _, path := range []string{"/", "/runs/r-ok", "/history.json", "/runs/missing"} {
			res := b.do(t, m, path, "")
			if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d allow %q, want 405 GET, HEAD", m, path, res.status, res.header.Get("Allow"))
			}
		}
	}
	head := b.do(t, http.MethodHead, "/runs/r-ok", "")
	if head.status != http.StatusOK || len(head.body) != 0 {
		t.Errorf("HEAD: %d with %d body bytes", head.status, len(head.body))
	}
}

// TestForgedHostIs421: a Host that is neither the bound nor the public
// origin is misdirected, before any route (a DNS-rebinding page gets
// nothing); the bound and public origins are answered.
func TestForgedHostIs421(t *testing.T) {
	t.Parallel()
	b := serve(t, library(t), observer.Exposure{Expose: true, PublicURL: "https://runs.example.test", EdgeAuth: true}, "")
	port := b.url[strings.LastIndexByte(b.url, ':')+1:]
	for _, host := range []string{"evil.example", "evil.example:" + port, "runs.example.test.evil.example", "localhost:" + port, "127.0.0.2:" + port, "runs.example.test:80"} {
		for _, path := range []string{"/", "/runs/r-ok", "/history.json", "/runs/missing"} {
			if res := b.do(t, http.MethodGet, path, host); res.status != http.StatusMisdirectedRequest {
				t.Errorf("Host %s %s: %d, want 421", host, path, res.status)
			}
		}
		if res := b.do(t, http.MethodPost, "/", host); res.status != http.StatusMisdirectedRequest {
			t.Errorf("POST with Host %s: %d, want 421", host, res.status)
		}
	}
	for _, host := range []string{"", "runs.example.test", "RUNS.example.test", "runs.example.test:443"} {
		if res := b.do(t, http.MethodGet, "/runs/r-ok", host); res.status != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", host, res.status)
		}
	}
}

// notFoundPaths are answered with the one 404: missing runs, runs not
// served, bad names and traversal attempts.
func assertSame404(t *testing.T, b *testBundle, paths []string) {
	t.Helper()
	var first response
	for i, p := range paths {
		res := b.get(t, p)
		if res.status != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", p, res.status)
		}
		res.header.Del("Date")
		if i == 0 {
			first = res
			continue
		}
		if string(res.body) != string(first.body) || !maps.EqualFunc(res.header, first.header, slices.Equal) {
			t.Fatalf("%s answers a different 404 than %s:\n%q %v\n%q %v", p, paths[0], res.body, res.header, first.body, first.header)
		}
	}
}

// TestMissingAndNotServedAre404Identical: under --safe a run that fails
// verify, and in single-run mode any other run, answer the same bytes as a
// run that does not exist.
func TestMissingAndNotServedAre404Identical(t *testing.T) {
	t.Parallel()
	data := library(t)
	safe := serve(t, data, observer.Exposure{Expose: true, PublicURL: "https://runs.example.test", Safe: true}, "")
	assertSame404(t, safe, []string{"/runs/no-such-run", "/runs/r-tampered", "/runs/r-running",
		"/runs/no-such-run/screenshots/step-001.png", "/runs/r-tampered/screenshots/step-001.png",
		"/runs/r-ok/screenshots/step-009.png", "/runs/r-ok/screenshots/record.json", "/runs/r-ok/screenshots/..%2Frecord.json",
		"/runs/..%2F..%2Fetc", "/runs/%2e%2e", "/runs/r-ok/record.json", "/runs/r-ok/manifest.json", "/nope"})
	if got := historyIDs(t, safe, ""); !slices.Equal(got, []string{"r-plain", "r-ok"}) {
		t.Fatalf("safe history = %v, want only the share_ready runs", got)
	}
	only := serve(t, data, observer.Exposure{}, "r-plain")
	assertSame404(t, only, []string{"/runs/no-such-run", "/runs/r-ok", "/runs/r-ok/screenshots/step-001.png"})
	if got := historyIDs(t, only, ""); !slices.Equal(got, []string{"r-plain"}) {
		t.Fatalf("single-run history = %v", got)
	}
}

// TestSafeReverifiesOnChange: a share_ready run stops being served the
// moment a file of it changes, and a symlinked screenshot is never served.
func TestSafeReverifiesOnChange(t *testing.T) {
	t.Parallel()
	data := library(t)
	b := serve(t, data, observer.Exposure{Safe: true}, "")
	if res := b.get(t, "/runs/r-ok"); res.status != http.StatusOK {
		t.Fatalf("r-ok before the change: %d", res.status)
	}
	shot := filepath.Join(data, "runs", "r-ok", "screenshots", "step-002.png")
	raw, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-20] ^= 0xff
	if err := os.WriteFile(shot, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/runs/r-ok", "/runs/r-ok/screenshots/step-001.png", "/runs/r-ok/screenshots/step-002.png"} {
		if res := b.get(t, p); res.status != http.StatusNotFound {
			t.Errorf("%s after a screenshot changed: %d, want 404", p, res.status)
		}
	}
	if got := historyIDs(t, b, ""); !slices.Equal(got, []string{"r-plain"}) {
		t.Fatalf("history after the change = %v", got)
	}
	loop := serve(t, data, observer.Exposure{}, "")
	link := filepath.Join(data, "runs", "r-plain", "screenshots")
	if err := os.MkdirAll(link, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(data, "runs", "r-ok", "screenshots", "step-001.png"), filepath.Join(link, "step-001.png")); err != nil {
		t.Fatal(err)
	}
	if res := loop.get(t, "/runs/r-plain/screenshots/step-001.png"); res.status != http.StatusNotFound {
		t.Fatalf("symlinked screenshot: %d, want 404", res.status)
	}
}

// TestNoSecretInAnyServedByte crawls every link of every page in every
// mode (the tampered run included, in loopback) and scans every byte.
func TestNoSecretInAnyServedByte(t *testing.T) {
	t.Parallel()
	data := library(t)
	before := treeState(t, data)
	defer func() {
		if after := treeState(t, data); after != before {
			t.Errorf("serving changed the data dir:\nbefore %s\nafter  %s", before, after)
		}
	}()
	for _, x := range []observer.Exposure{{}, {Safe: true}, {Expose: true, PublicURL: "https://runs.example.test", EdgeAuth: true}} {
		b := serve(t, data, x, "")
		seen := map[string]bool{}
		queue := []string{"/", "/history.json", "/style.css", "/?status=FAILED", "/?q=" + seededSecret, "/runs/" + seededSecret}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if seen[p] {
				continue
			}
			seen[p] = true
			res := b.get(t, p)
			all := string(res.body)
			for k, vs := range res.header {
				all += k + strings.Join(vs, ",")
			}
			if redact.Reveals(all, seededSecret) {
				t.Fatalf("mode %+v: %s reveals the seeded secret", x, p)
			}
			for _, l := range links(all) {
				queue = append(queue, l)
			}
		}
		if len(seen) < 8 {
			t.Fatalf("crawl reached only %d paths: %v", len(seen), slices.Sorted(maps.Keys(seen)))
		}
	}
}

// links are the same-origin href and src values of an HTML page.
func links(page string) []string {
	var out []string
	for _, attr := range []string{`href="`, `src="`} {
		rest := page
		for {
			i := strings.Index(rest, attr)
			if i < 0 {
				break
			}
			rest = rest[i+len(attr):]
			j := strings.IndexByte(rest, '"')
			if j < 0 {
				break
			}
			if l := strings.ReplaceAll(rest[:j], "&amp;", "&"); strings.HasPrefix(l, "/") {
				out = append(out, l)
			}
		}
	}
	return out
}

// treeState is every path, mode, size and modification time under dir.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d;", strings.TrimPrefix(p, dir), fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
