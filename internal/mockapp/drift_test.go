package mockapp

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// driftPages are the pages a drift re-renders, by name.
var driftPages = map[string]string{"root": "/", "nav": "/nav", "search": searchPath, "member": memberPrefix + "12345"}

// setDrift posts body to /_control/drift and returns the answer.
func (b *testBundle) setDrift(tb testing.TB, body string) DriftStatus {
	tb.Helper()
	var v DriftStatus
	if status := b.control(tb, http.MethodPost, "/_control/drift", body, &v); status != http.StatusOK {
		tb.Fatalf("POST /_control/drift %s: status %d", body, status)
	}
	return v
}

func (b *testBundle) driftState(tb testing.TB) DriftStatus {
	tb.Helper()
	var v DriftStatus
	if status := b.control(tb, http.MethodGet, "/_control/drift", "", &v); status != http.StatusOK {
		tb.Fatalf("GET /_control/drift: status %d", status)
	}
	return v
}

// pages fetches the drifted pages with a signed-on client.
func (b *testBundle) pages(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for name, path := range driftPages {
		resp := b.get(tb, path)
		if resp.status != http.StatusOK {
			tb.Fatalf("GET %s: status %d", path, resp.status)
		}
		out[name] = resp.body
	}
	return out
}

// The hidden decoys are not in the accessibility tree; visibleText drops
// them, the style sheet and the tags.
var (
	hiddenDecoys = []string{
		`<div class="hide"><button type="button">Search</button></div>`,
		`<button type="button" hidden>Search</button>`,
		`<div aria-hidden="true"><button type="button" tabindex="-1">Search</button></div>`,
	}
	styleSheet = regexp.MustCompile(`(?s)<style>.*?</style>|<title>.*?</title>`)
	anyTag     = regexp.MustCompile(`<[^>]*>`)
	spaces     = regexp.MustCompile(`\s+`)
)

func visibleText(body string) string {
	for _, h := range hiddenDecoys {
		body = strings.ReplaceAll(body, h, "")
	}
	body = styleSheet.ReplaceAllString(body, " ")
	body = anyTag.ReplaceAllString(body, "")
	body = strings.ReplaceAll(html.UnescapeString(body), "\u00a0", " ")
	return strings.TrimSpace(spaces.ReplaceAllString(body, " "))
}

// elemText returns the visible text of every element opened by a tag that
// matches open (up to its closing tag name).
func elemText(body, open, tag string) []string {
	re := regexp.MustCompile(`(?s)` + open + `[^>]*>(.*?)</` + tag + `>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, visibleText(m[1]))
	}
	return out
}

// submitNames returns the names of the page's submit buttons.
func submitNames(body string) []string {
	names := elemText(body, `<button type="submit"`, "button")
	for _, m := range regexp.MustCompile(`<input type="submit" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		names = append(names, html.UnescapeString(m[1]))
	}
	return names
}

func TestDriftControlErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	tests := []struct {
		name      string
		body      string
		wantField string
	}{
		{name: "empty body", body: "", wantField: "body"},
		{name: "bad JSON", body: "{", wantField: "body"},
		{name: "unknown key", body: `{"kind":"benign","seed":1,"x":1}`, wantField: "body"},
		{name: "no kind", body: `{"seed":1}`, wantField: "kind"},
		{name: "unknown kind", body: `{"kind":"chaos","seed":1}`, wantField: "kind"},
		{name: "no seed", body: `{"kind":"benign"}`, wantField: "seed"},
		{name: "negative seed", body: `{"kind":"semantic","seed":-1}`, wantField: "seed"},
		{name: "seed not a number", body: `{"kind":"benign","seed":"7"}`, wantField: "seed"},
		{name: "fractional seed", body: `{"kind":"benign","seed":1.5}`, wantField: "seed"},
		{name: "semantic change on benign", body: `{"kind":"benign","seed":1,"change":"currency_eu"}`, wantField: "change"},
		{name: "benign change on semantic", body: `{"kind":"semantic","seed":1,"change":"usd_in_header"}`, wantField: "change"},
		{name: "unknown change", body: `{"kind":"semantic","seed":1,"change":"meteor"}`, wantField: "change"},
		{name: "seed with off", body: `{"kind":"off","seed":1}`, wantField: "seed"},
		{name: "change with off", body: `{"kind":"off","change":"currency_eu"}`, wantField: "change"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out controlError
			if code := b.control(t, http.MethodPost, "/_control/drift", tt.body, &out); code != http.StatusBadRequest {
				t.Fatalf("= %d, want 400 (%+v)", code, out)
			}
			if out.Field != tt.wantField || out.Error == "" {
				t.Errorf("error = %+v, want field %q and a message", out, tt.wantField)
			}
		})
	}
	if v := b.driftState(t); v.Drift != nil {
		t.Errorf("refused requests set drift %+v", v.Drift)
	}
	if code := b.control(t, http.MethodDelete, "/_control/drift", "", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE = %d, want 405", code)
	}
}

func TestDriftSetOffAndReset(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	v := b.driftState(t)
	if v.Drift != nil || !slices.Equal(v.Changes, DriftChanges) || len(v.Features) != len(driftFeatures) {
		t.Fatalf("initial state = %+v", v)
	}
	if !slices.IsSorted(DriftChanges) {
		t.Errorf("DriftChanges is not sorted: %v", DriftChanges)
	}
	v = b.setDrift(t, `{"kind":"benign","seed":7}`)
	if v.Drift == nil || v.Drift.Kind != DriftBenign || v.Drift.Seed != 7 || v.Drift.Change != "" ||
		!slices.Contains(v.Drift.Features, "ids") || !slices.Contains(v.Drift.Features, driftFeatures[7%len(driftFeatures)]) {
		t.Fatalf("benign#7 = %+v", v.Drift)
	}
	v = b.setDrift(t, `{"kind":"semantic","seed":3}`)
	if v.Drift == nil || v.Drift.Change != DriftChanges[3] {
		t.Fatalf("semantic#3 without a change = %+v, want change %s", v.Drift, DriftChanges[3])
	}
	v = b.setDrift(t, `{"kind":"semantic","seed":3,"change":"rename_heading"}`)
	if v.Drift.Change != "rename_heading" || !slices.Contains(driftRenames["rename_heading"], v.Drift.Detail) {
		t.Fatalf("rename_heading = %+v", v.Drift)
	}
	if got := v.Drift.String(); got != "semantic#3:rename_heading" {
		t.Errorf("String() = %q", got)
	}
	if v = b.setDrift(t, `{"kind":"off"}`); v.Drift != nil {
		t.Fatalf("off = %+v", v.Drift)
	}
	b.setDrift(t, `{"kind":"benign","seed":1}`)
	if code := b.control(t, http.MethodPost, "/_control/reset", "", nil); code != http.StatusOK {
		t.Fatalf("reset = %d", code)
	}
	if v = b.driftState(t); v.Drift != nil {
		t.Errorf("reset left drift %+v", v.Drift)
	}
}

func TestDriftIsDeterministic(t *testing.T) {
	t.Parallel()
	one, two := setup(t, Options{}), setup(t, Options{Variant: VariantB})
	for _, b := range []*testBundle{one, two} {
		b.signOn(t)
	}
	for _, body := range []string{`{"kind":"benign","seed":5}`, `{"kind":"semantic","seed":2,"change":"duplicate_search_button"}`} {
		one.setDrift(t, body)
		two.setDrift(t, body)
		a := one.pages(t)
		// The other server renders its pages in another order, twice.
		for _, name := range []string{"member", "search", "nav", "root", "member"} {
			if got := two.get(t, driftPages[name]).body; got != a[name] {
				t.Errorf("%s: %s differs between servers (or between renders)", body, name)
			}
		}
	}
	one.setDrift(t, `{"kind":"benign","seed":5}`)
	p5 := one.pages(t)
	one.setDrift(t, `{"kind":"benign","seed":6}`)
	p6 := one.pages(t)
	for name := range driftPages {
		if p5[name] == p6[name] {
			t.Errorf("%s: seeds 5 and 6 render the same page", name)
		}
	}
}

// TestDriftBenignKeepsTheLookupsNames checks, in the markup, what the
// reference lookup relies on: one "Member Search" link to the search page
// in the navigation frame, one field named "Member number" and one submit
// button named "Search" on the search page, the record's labels and values
// on Member Details, frames named nav and content; and that no id or class
// of variant a survives.
func TestDriftBenignKeepsTheLookupsNames(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	for seed := 1; seed <= 40; seed++ {
		v := b.setDrift(t, fmt.Sprintf(`{"kind":"benign","seed":%d}`, seed))
		p := b.pages(t)
		name := v.Drift.String()
		if !strings.Contains(p["root"], `<iframe name="nav" title="Navigation" src="/nav"`) ||
			!strings.Contains(p["root"], `<iframe name="content" title="Workspace" src="/content/home"`) {
			t.Errorf("%s: frames renamed:\n%s", name, p["root"])
		}
		links := elemText(p["nav"], `<a href="/content/search" target="content"`, "a")
		if !slices.Equal(links, []string{"Member Search"}) {
			t.Errorf("%s: search links %q", name, links)
		}
		if n := slices.Index(elemText(p["nav"], `<a\b`, "a"), "Member Search"); n < 0 || slices.Contains(elemText(p["nav"], `<a\b`, "a")[n+1:], "Member Search") {
			t.Errorf("%s: not exactly one link named Member Search", name)
		}
		if n := strings.Count(p["search"], "Member number"); n != 1 {
			t.Errorf("%s: search page names Member number %d times:\n%s", name, n, p["search"])
		}
		if got := submitNames(p["search"]); !slices.Equal(got, []string{"Search"}) {
			t.Errorf("%s: submit buttons %q", name, got)
		}
		text := visibleText(p["member"])
		for _, want := range []string{"Member Details", "Status", "Active", "Savings Balance", "$1,234.56", "As of", "11/30/2026"} {
			if !strings.Contains(strings.ToLower(text), strings.ToLower(want)) {
				t.Errorf("%s: member page lacks %q: %s", name, want, text)
			}
		}
		for page, body := range p {
			for _, stale := range []string{`class="md-`, `id="member-number"`, `id="search-submit"`, `id="member-data"`, `id="nav-links"`} {
				if strings.Contains(body, stale) {
					t.Errorf("%s: %s keeps %s", name, page, stale)
				}
			}
		}
	}
}

// TestDriftBenignCoversEveryFeature checks that seeds 1..24 (the bench's
// benign variants) render every kind of benign churn at least once.
func TestDriftBenignCoversEveryFeature(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	seen := map[string]bool{}
	rowSwap := regexp.MustCompile(`(?s)<tr[^>]*>.*?1,234.*?Savings.*?</tr>`)
	canonical := []string{"Member number", "Name", "Status", "Savings Balance", "As of"}
	for seed := 1; seed <= 24; seed++ {
		b.setDrift(t, fmt.Sprintf(`{"kind":"benign","seed":%d}`, seed))
		p := b.pages(t)
		all := p["root"] + p["nav"] + p["search"] + p["member"]
		markers := map[string]bool{
			"spacer cell":          strings.Contains(p["member"], "<td></td>"),
			"cells swapped":        rowSwap.MatchString(p["member"]),
			"uppercase labels":     strings.Contains(p["member"], "text-transform:uppercase"),
			"no-break spaces":      strings.Contains(p["member"], "Savings&nbsp;Balance"),
			"trailing colon":       strings.Contains(p["member"], "Savings Balance:"),
			"cents span":           strings.Contains(p["member"], `<span style="font-size:80%">.56</span>`),
			"row headers":          strings.Contains(p["member"], `<th scope="row"`),
			"ARIA table":           strings.Contains(p["member"], `role="table"`),
			"role=heading":         strings.Contains(p["member"], `role="heading"`),
			"nested layout tables": strings.Count(p["member"], "<table") >= 3,
			"named region":         strings.Contains(p["member"], `<section aria-label="Member record"`),
			"aria-label":           strings.Contains(p["search"], `aria-label="Member number"`),
			"label for":            strings.Contains(p["search"], `<label for=`),
			"aria-labelledby":      strings.Contains(p["search"], `aria-labelledby=`),
			"input submit":         strings.Contains(p["search"], `<input type="submit" value="Search"`),
			"fieldset":             strings.Contains(p["search"], "<fieldset"),
			"clear first":          strings.Index(p["search"], `type="reset"`) < strings.Index(p["search"], `type="submit"`),
			"presentation wrapper": strings.Contains(all, `role="presentation"`),
			"frames swapped":       strings.Index(p["root"], `name="content"`) < strings.Index(p["root"], `name="nav"`),
			"frames in a table":    strings.Contains(p["root"], "<table"),
			"nav without a list":   !strings.Contains(p["nav"], "<ul"),
			"link name over spans": strings.Contains(p["nav"], "<span>Member</span> <span>Search</span>"),
			"decoys":               strings.Contains(all, "Member Search help") && strings.Contains(all, "Search tips") && strings.Contains(all, "Savings Balance history"),
			"inline styles":        strings.Contains(all, `style="`),
			"rows reordered":       !slices.IsSorted(labelOrder(visibleText(p["member"]), canonical)),
			"links reordered":      !strings.Contains(visibleText(p["nav"]), "Member Search Open Sub-Account Transfer Funds Sign Off"),
		}
		for k, ok := range markers {
			if ok {
				seen[k] = true
			}
		}
	}
	for _, k := range []string{
		"spacer cell", "cells swapped", "uppercase labels", "no-break spaces", "trailing colon", "cents span",
		"row headers", "ARIA table", "role=heading", "nested layout tables", "named region", "aria-label", "label for",
		"aria-labelledby", "input submit", "fieldset", "clear first", "presentation wrapper", "frames swapped",
		"frames in a table", "nav without a list", "link name over spans", "decoys", "inline styles", "rows reordered",
		"links reordered",
	} {
		if !seen[k] {
			t.Errorf("no benign seed in 1..24 renders %q", k)
		}
	}
}

// labelOrder returns the positions of labels in text, in the order given.
func labelOrder(text string, labels []string) []int {
	low := strings.ToLower(strings.ReplaceAll(text, ":", ""))
	out := make([]int, len(labels))
	for i, l := range labels {
		out[i] = strings.Index(low, strings.ToLower(l))
	}
	return out
}

func TestDriftSemanticChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	type pages = map[string]string
	missing := func(page, s string) func(pages) bool {
		return func(p pages) bool { return !strings.Contains(visibleText(p[page]), s) }
	}
	has := func(page, s string) func(pages) bool {
		return func(p pages) bool { return strings.Contains(p[page], s) }
	}
	visible := func(page, s string) func(pages) bool {
		return func(p pages) bool { return strings.Contains(visibleText(p[page]), s) }
	}
	count := func(page, s string, n int) func(pages) bool {
		return func(p pages) bool { return strings.Count(p[page], s) == n }
	}
	checks := map[string][]func(pages) bool{
		"currency_eu":             {has("member", "1.234,56 €"), missing("member", "$1,234.56")},
		"currency_eu_prefix":      {has("member", "€1.234,56")},
		"currency_eu_space":       {has("member", "1\u202f234,56\u00a0€")},
		"currency_eur_code":       {has("member", "EUR 1,234.56")},
		"currency_gbp":            {has("member", "£1,234.56")},
		"currency_header":         {has("member", "<th>Balance (EUR)</th>"), has("member", ">1,234.56<"), missing("member", "$1,234.56")},
		"currency_near_value":     {has("member", "<th>Balance (USD)</th>"), has("member", ">1,234.56 CAD<"), missing("member", "$1,234.56")},
		"duplicate_member_field":  {count("search", `title="Member number"`, 2), has("search", `name="member_alt"`)},
		"duplicate_nav_link":      {count("nav", ">Member Search</a>", 2), has("nav", `href="`+driftDecoyPath+`" target="content"`)},
		"duplicate_savings_row":   {count("member", "Savings Balance", 2), has("member", "$250.00")},
		"duplicate_savings_table": {count("member", "Savings Balance", 2), has("member", "Joint account")},
		"duplicate_search_button": {func(p pages) bool { return slices.Equal(submitNames(p["search"]), []string{"Search", "Search"}) }},
		"moved_value_blank":       {has("member", "Available Balance")},
		"moved_value_into_label":  {visible("member", "Savings Balance $1,234.56")},
		"moved_value_next_row":    {has("member", `colspan="2"`)},
		"moved_value_share_row":   {has("member", "See Share Account 00")},
		"moved_value_swapped": {func(p pages) bool {
			return regexp.MustCompile(`Savings(?: |&nbsp;)Balance:?</td><td[^>]*>11/30/2026`).MatchString(p["member"])
		}},
		"remove_member_field":  {missing("search", "Member number"), func(p pages) bool { return !strings.Contains(p["search"], `name="member"`) }},
		"remove_savings_row":   {missing("member", "Savings Balance"), missing("member", "No savings account")},
		"remove_search_button": {func(p pages) bool { return len(submitNames(p["search"])) == 0 }},
		"remove_status_row":    {missing("member", "Status"), missing("member", "Active")},
		"rename_as_of_label":   {missing("member", "As of")},
		"rename_heading":       {missing("member", "Member Details")},
		"rename_member_field":  {missing("search", "Member number")},
		"rename_nav_link":      {missing("nav", "Member Search")},
		"rename_savings_label": {missing("member", "Savings Balance")},
		"rename_search_button": {func(p pages) bool { return !slices.Contains(submitNames(p["search"]), "Search") }},
		"rename_status_label":  {func(p pages) bool { return !strings.Contains(p["member"], ">Status<") }},
	}
	for i, change := range DriftChanges {
		v := b.setDrift(t, fmt.Sprintf(`{"kind":"semantic","seed":%d,"change":%q}`, i+1, change))
		p := b.pages(t)
		cs, ok := checks[change]
		if !ok {
			t.Errorf("%s: no check", change)
			continue
		}
		if renames := driftRenames[change]; len(renames) > 0 {
			page := "member"
			switch change {
			case "rename_member_field", "rename_search_button":
				page = "search"
			case "rename_nav_link":
				page = "nav"
			}
			cs = append(cs, has(page, html.EscapeString(v.Drift.Detail)))
		}
		for k, check := range cs {
			if !check(p) {
				t.Errorf("%s: check %d fails; pages:\nsearch: %s\nmember: %s", v.Drift, k, p["search"], p["member"])
			}
		}
		if slices.Contains(v.Drift.Features, "decoys") || slices.Contains(v.Drift.Features, "order") {
			t.Errorf("%s: a semantic variant also moves or adds things: %v", v.Drift, v.Drift.Features)
		}
	}
}

func TestDriftDecoys(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.setDrift(t, `{"kind":"semantic","seed":1,"change":"duplicate_search_button"}`)

	resp := b.post(t, driftSearchPath, url.Values{"member": {"12345"}})
	if resp.status != http.StatusSeeOther || resp.location() != memberPrefix+"12345" {
		t.Fatalf("ordinary search through the drift route: %d %q", resp.status, resp.location())
	}
	if v := b.driftState(t); v.DecoyHits != 0 {
		t.Fatalf("an ordinary search counted %d decoy hits", v.DecoyHits)
	}
	resp = b.post(t, driftSearchPath, url.Values{"member": {"12345"}, "scope": {"archive"}})
	text := visibleText(resp.body)
	if resp.status != http.StatusOK || !strings.Contains(text, "$9,876.54") || !strings.Contains(text, "Closed") || strings.Contains(text, "$1,234.56") {
		t.Fatalf("archive search: %d %s", resp.status, text)
	}
	resp = b.post(t, driftSearchPath, url.Values{"member": {""}, "member_alt": {"12345"}})
	if !strings.Contains(visibleText(resp.body), "$9,876.54") {
		t.Fatalf("duplicate field search: %s", resp.body)
	}
	resp = b.get(t, driftDecoyPath)
	if resp.status != http.StatusOK || !strings.Contains(resp.body, `action="`+driftSearchPath+`"`) || !strings.Contains(resp.body, `name="scope" value="archive"`) {
		t.Fatalf("decoy link page: %d %s", resp.status, resp.body)
	}
	if v := b.driftState(t); v.DecoyHits != 3 {
		t.Fatalf("decoy hits = %d, want 3", v.DecoyHits)
	}
	// Without a session the gate answers first: no hit.
	anon := b.newClient(t)
	if r := b.do(t, anon, http.MethodGet, driftDecoyPath, nil); r.status != http.StatusSeeOther || r.location() != signonPath {
		t.Errorf("anonymous decoy: %d %q", r.status, r.location())
	}
	if v := b.driftState(t); v.DecoyHits != 3 {
		t.Errorf("decoy hits = %d after an anonymous request, want 3", v.DecoyHits)
	}
	if v := b.setDrift(t, `{"kind":"benign","seed":2}`); v.DecoyHits != 0 {
		t.Errorf("a new drift kept %d decoy hits", v.DecoyHits)
	}
}

// TestDriftLeavesOtherPages checks that a drift re-renders only the four
// pages of the lookup, and that a page owing the undeclared-dialog notice is
// rendered the ordinary way.
func TestDriftLeavesOtherPages(t *testing.T) {
	t.Parallel()
	plain, drifted := setup(t, Options{}), setup(t, Options{})
	plain.signOn(t)
	drifted.signOn(t)
	drifted.setDrift(t, `{"kind":"benign","seed":9}`)
	for _, path := range []string{homePath, transferPath, subaccountPath, memberPrefix + "99999", memberPrefix + "45678", signonPath} {
		a, b := plain.get(t, path), drifted.get(t, path)
		if a.status != b.status || a.body != b.body {
			t.Errorf("%s differs under drift", path)
		}
	}
	if r := drifted.post(t, searchPath, url.Values{"member": {"99999"}}); !strings.Contains(r.body, `role="status"`) || !strings.Contains(r.body, "Member not found") {
		t.Errorf("not-found search under drift: %s", r.body)
	}
	if r := drifted.post(t, searchPath, url.Values{"member": {"12"}}); r.status != http.StatusBadRequest || !strings.Contains(r.body, `role="alert"`) {
		t.Errorf("bad search under drift: %d %s", r.status, r.body)
	}
	drifted.arm(t, FaultUndeclaredDialog, 1)
	r := drifted.get(t, searchPath)
	if !strings.Contains(r.body, `role="dialog"`) || !strings.Contains(r.body, `class="md-`) {
		t.Errorf("the notice page was drifted: %s", r.body)
	}
}

// wellFormed reports the first markup error of body: a bad tag name, a
// repeated attribute, an unbalanced tag, or a block element inside a <p>
// (which the parser would close early).
func wellFormed(body string) error {
	void := map[string]bool{"input": true, "meta": true, "br": true, "img": true, "hr": true, "link": true}
	block := map[string]bool{"div": true, "table": true, "section": true, "form": true, "ul": true, "h1": true, "h2": true, "fieldset": true, "p": true}
	tag := regexp.MustCompile(`<(/?)([^\s>/]+)([^>]*)>`)
	attr := regexp.MustCompile(`\s([a-zA-Z-]+)(?:="[^"]*")?`)
	name := regexp.MustCompile(`^(?:[a-zA-Z][a-zA-Z0-9]*|!DOCTYPE)$`)
	var stack []string
	for _, m := range tag.FindAllStringSubmatch(styleSheet.ReplaceAllString(body, ""), -1) {
		closing, t, attrs := m[1] == "/", strings.ToLower(m[2]), m[3]
		if !name.MatchString(m[2]) {
			return fmt.Errorf("bad tag %q", m[0])
		}
		if t == "!doctype" {
			continue
		}
		if closing {
			if len(stack) == 0 || stack[len(stack)-1] != t {
				return fmt.Errorf("</%s> closes %v", t, stack)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		seen := map[string]bool{}
		for _, a := range attr.FindAllStringSubmatch(attrs, -1) {
			if seen[a[1]] {
				return fmt.Errorf("attribute %s twice in %q", a[1], m[0])
			}
			seen[a[1]] = true
		}
		if block[t] && slices.Contains(stack, "p") {
			return fmt.Errorf("<%s> inside <p>", t)
		}
		if !void[t] {
			stack = append(stack, t)
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	return nil
}

func TestDriftPagesAreWellFormed(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	var bodies []string
	for seed := 1; seed <= 40; seed++ {
		bodies = append(bodies, fmt.Sprintf(`{"kind":"benign","seed":%d}`, seed))
	}
	for i, change := range DriftChanges {
		bodies = append(bodies, fmt.Sprintf(`{"kind":"semantic","seed":%d,"change":%q}`, i+1, change))
	}
	for i, change := range DriftBenignChanges {
		bodies = append(bodies, fmt.Sprintf(`{"kind":"benign","seed":%d,"change":%q}`, i+1, change))
	}
	for _, body := range bodies {
		v := b.setDrift(t, body)
		p := b.pages(t)
		p["decoy"] = b.get(t, driftDecoyPath).body
		p["archive"] = b.post(t, driftSearchPath, url.Values{"member": {"12345"}, "scope": {"archive"}}).body
		for name, page := range p {
			if err := wellFormed(page); err != nil {
				t.Errorf("%s %s: %v", v.Drift, name, err)
			}
		}
	}
	if err := wellFormed(`<p><div></div></p>`); err == nil {
		t.Error("wellFormed accepts a div in a p")
	}
	if err := wellFormed(`<td id="a" id="b"></td>`); err == nil {
		t.Error("wellFormed accepts a repeated attribute")
	}
	if err := wellFormed(`<span&nbsp;id="a">x</span>`); err == nil {
		t.Error("wellFormed accepts a no-break space in a tag")
	}
}

// TestDriftLayoutDescribesThePages checks that the layout notes of
// GET /_control/drift tell the truth about the rendered pages.
func TestDriftLayoutDescribesThePages(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	for seed := 1; seed <= 24; seed++ {
		v := b.setDrift(t, fmt.Sprintf(`{"kind":"benign","seed":%d}`, seed))
		if got := b.driftState(t).Drift; got == nil || fmt.Sprint(got.Layout) != fmt.Sprint(v.Drift.Layout) {
			t.Fatalf("%s: GET and POST disagree on the layout", v.Drift)
		}
		p := b.pages(t)
		notes := strings.Join(v.Drift.Layout["member"], "\n")
		for note, marker := range map[string]string{
			"spacer cell":        "<td></td>",
			"<th scope=row>":     `<th scope="row"`,
			"ARIA table":         `role="table"`,
			"upper-cased by CSS": "text-transform:uppercase",
			"end in a colon":     "Savings Balance:",
			"no-break spaces":    "Savings&nbsp;Balance",
			"smaller span":       `font-size:80%">.56<`,
		} {
			if strings.Contains(notes, note) != strings.Contains(p["member"], marker) {
				t.Errorf("%s: notes %q and page disagree on %q", v.Drift, notes, note)
			}
		}
	}
}
