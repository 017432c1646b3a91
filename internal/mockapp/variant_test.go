package mockapp

import (
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// tour visits every page the app renders, in the server's variant, and
// returns the bodies by page name.
func tour(t *testing.T, b *testBundle) map[string]string {
	t.Helper()
	c := b.newClient(t)
	get := func(path string) string { return b.do(t, c, http.MethodGet, path, nil).body }
	post := func(path string, form url.Values) string { return b.do(t, c, http.MethodPost, path, form).body }
	pages := map[string]string{
		"root":       get("/"),
		"nav":        get("/nav?q=x"),
		"signon":     get(signonPath),
		"signon_bad": post(signonPath, url.Values{"operator": {"OP1001"}, "password": {"nope-nope"}}),
	}
	b.signOnWith(t, c)
	pages["home"] = get(homePath)
	pages["search"] = get(searchPath)
	pages["search_status"] = post(searchPath, url.Values{"member": {"99999"}})
	pages["search_alert"] = post(searchPath, url.Values{"member": {"x"}})
	for _, id := range []string{"12345", "23456", "34567", "45678", "56789", "99999", "1"} {
		pages["member_"+id] = get(memberPrefix + id)
	}
	pages["subaccount"] = get(subaccountPath)
	pages["subaccount_alert"] = post(subaccountPath, url.Values{"member": {"12345"}, "account_type": {"Savings"}, "deposit": {"x"}})
	pages["subaccount_done"] = post(subaccountPath, url.Values{"member": {"12345"}, "account_type": {"Savings"}, "deposit": {"1"}})
	pages["transfer"] = get(transferPath)
	pages["transfer_alert"] = post(reviewPath, url.Values{"member": {"12345"}, "from": {"Savings"}, "to": {"Savings"}, "amount": {"1"}})
	pages["review"] = post(reviewPath, url.Values{"member": {"12345"}, "from": {"Savings"}, "to": {"Checking"}, "amount": {"1"}})
	token := tokenField.FindStringSubmatch(pages["review"])[1]
	pages["complete"] = post(submitPath, url.Values{"token": {token}})
	pages["duplicate"] = post(submitPath, url.Values{"token": {token}})
	b.arm(t, FaultUndeclaredDialog, 1)
	pages["notice"] = get(homePath)
	post(noticeAckPath, url.Values{})
	return pages
}

func tourVariant(t *testing.T, v string) map[string]string {
	t.Helper()
	return tour(t, setup(t, Options{Variant: v}))
}

// inventory lists what an accessibility tree would name on a page: roles
// and names, table cells, options and paragraph texts.
func inventory(body string) map[string]bool {
	probes := []struct {
		kind string
		re   *regexp.Regexp
	}{
		{"document", regexp.MustCompile(`<title>([^<]*)</title>`)},
		{"button", regexp.MustCompile(`<button\b[^>]*>([^<]*)</button>`)},
		{"link", regexp.MustCompile(`<a\b[^>]*>([^<]*)</a>`)},
		{"heading", regexp.MustCompile(`<h1>([^<]*)</h1>`)},
		{"title", regexp.MustCompile(`\btitle="([^"]*)"`)},
		{"label", regexp.MustCompile(`<label\b[^>]*>([^<]*)`)},
		{"cell", regexp.MustCompile(`<td\b[^>]*>(?:<span\b[^>]*>)?([^<]+)(?:</span>)?</td>`)},
		{"option", regexp.MustCompile(`<option\b[^>]*>([^<]*)</option>`)},
		{"text", regexp.MustCompile(`<p\b[^>]*>([^<]+)</p>`)},
		{"role", regexp.MustCompile(`\brole="([^"]*)"`)},
		{"aria-label", regexp.MustCompile(`\baria-label="([^"]*)"`)},
		{"field", regexp.MustCompile(`\bname="([^"]*)"`)},
	}
	out := make(map[string]bool)
	for _, p := range probes {
		for _, m := range p.re.FindAllStringSubmatch(body, -1) {
			out[p.kind+":"+strings.TrimSpace(m[1])] = true
		}
	}
	for _, r := range tableRows(body) {
		out["row:"+r.Label+"="+r.Value] = true
	}
	return out
}

// tagPaths maps each named target on a page (button, link, heading, input,
// select, iframe, text cell) to its ancestor tag path. A structural CSS or
// XPath selector follows that path, so a changed path kills it.
func tagPaths(body string) map[string]string {
	void := map[string]bool{"input": true, "meta": true, "br": true, "img": true, "hr": true, "link": true}
	tag := regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>([^<]*)`)
	nameAttr := regexp.MustCompile(`\bname="([^"]*)"`)
	var stack []string
	out := make(map[string]string)
	for _, m := range tag.FindAllStringSubmatch(body, -1) {
		closing, name, attrs, text := m[1] == "/", strings.ToLower(m[2]), m[3], strings.TrimSpace(m[4])
		if closing {
			if i := slices.Index(stack, name); i >= 0 {
				for len(stack) > 0 && stack[len(stack)-1] != name {
					stack = stack[:len(stack)-1]
				}
				stack = stack[:len(stack)-1]
			}
			continue
		}
		path := strings.Join(append(slices.Clone(stack), name), "/")
		key := ""
		switch name {
		case "input", "select", "iframe":
			if n := nameAttr.FindStringSubmatch(attrs); n != nil {
				key = name + ":" + n[1]
			}
		case "button", "a", "h1", "td", "span", "label":
			if text != "" {
				key = name + ":" + text
			}
		}
		if key != "" {
			out[key] += path + "|"
		}
		if !void[name] {
			stack = append(stack, name)
		}
	}
	return out
}

func TestVariantBChurnsEverySelector(t *testing.T) {
	t.Parallel()
	a, b := tourVariant(t, VariantA), tourVariant(t, VariantB)
	allA, allB := map[string]bool{}, map[string]bool{}
	for name := range a {
		hooksA, hooksB := selectorHooks(a[name]), selectorHooks(b[name])
		maps.Copy(allA, hooksA)
		maps.Copy(allB, hooksB)
		if len(hooksA) == 0 || len(hooksB) == 0 {
			t.Errorf("%s: a page without ids/classes", name)
		}
		pathsA, pathsB := tagPaths(a[name]), tagPaths(b[name])
		shared := 0
		for key, pa := range pathsA {
			pb, ok := pathsB[key]
			if !ok {
				continue
			}
			shared++
			if pa == pb {
				t.Errorf("%s: %s keeps its tag path %s in variant b", name, key, pa)
			}
		}
		if shared == 0 {
			t.Errorf("%s: no target shared between a and b", name)
		}
	}
	for hook := range allA {
		if allB[hook] {
			t.Errorf("selector %s of variant a still matches in variant b", hook)
		}
	}
}

func TestVariantBKeepsNames(t *testing.T) {
	t.Parallel()
	a, b := tourVariant(t, VariantA), tourVariant(t, VariantB)
	for name := range a {
		invA, invB := inventory(a[name]), inventory(b[name])
		added := diff(invB, invA)
		if missing := diff(invA, invB); len(missing) > 0 {
			t.Errorf("%s: variant b lost %v", name, missing)
		}
		var wantAdded []string
		if name != "root" && name != "nav" {
			wantAdded = []string{"link:Savings Balance history"}
		}
		if !slices.Equal(added, wantAdded) {
			t.Errorf("%s: variant b added %v, want %v", name, added, wantAdded)
		}
	}
	rowsA, rowsB := tableRows(a["member_12345"]), tableRows(b["member_12345"])
	if slices.Equal(rowsA, rowsB) {
		t.Error("member rows keep their order in variant b")
	}
	sortRows := func(rs []row) { sort.Slice(rs, func(i, j int) bool { return rs[i].Label < rs[j].Label }) }
	sortRows(rowsA)
	sortRows(rowsB)
	if !slices.Equal(rowsA, rowsB) {
		t.Errorf("member rows differ in content: %v vs %v", rowsA, rowsB)
	}
	search := b["search"]
	if !strings.Contains(search, `title="Member number"`) || strings.Contains(search, "<label") || strings.Contains(search, "placeholder") {
		t.Error("variant b must keep the title-only name of the search field")
	}
	if !strings.Contains(b["review"], `onsubmit="return confirm('Submit transfer of $1.00 from Savings to Checking? This cannot be undone.')"`) {
		t.Error("variant b review lost its confirm")
	}
}

func TestVariantCRenamesLabels(t *testing.T) {
	t.Parallel()
	b, c := tourVariant(t, VariantB), tourVariant(t, VariantC)
	want := map[string]struct{ gone, added []string }{
		"search":        {[]string{"button:Search"}, []string{"button:Find member"}},
		"search_status": {[]string{"button:Search"}, []string{"button:Find member"}},
		"search_alert":  {[]string{"button:Search"}, []string{"button:Find member"}},
		"member_12345":  {[]string{"cell:Savings Balance", "row:Savings Balance=$1,234.56"}, []string{"cell:Savings Bal.", "row:Savings Bal.=$1,234.56"}},
		"member_23456":  {[]string{"cell:Savings Balance", "row:Savings Balance=$0.00"}, []string{"cell:Savings Bal.", "row:Savings Bal.=$0.00"}},
		"member_56789":  {[]string{"cell:Savings Balance", "row:Savings Balance=$12,345,678.90"}, []string{"cell:Savings Bal.", "row:Savings Bal.=$12,345,678.90"}},
		"review":        {[]string{"button:Submit transfer"}, []string{"button:Post transfer"}},
	}
	for name := range b {
		invB, invC := inventory(b[name]), inventory(c[name])
		w := want[name]
		if gone := diff(invB, invC); !slices.Equal(gone, w.gone) {
			t.Errorf("%s: variant c dropped %v, want %v", name, gone, w.gone)
		}
		if added := diff(invC, invB); !slices.Equal(added, w.added) {
			t.Errorf("%s: variant c added %v, want %v", name, added, w.added)
		}
	}
	if !hasButton(c["search"], "Clear") || !hasButton(c["nav"], "Search") {
		t.Error(`variant c keeps "Clear" and the decoy "Search" in the nav frame`)
	}
	if !strings.Contains(c["review"], `confirm('Post transfer of $1.00 from Savings to Checking? This cannot be undone.')`) {
		t.Error("variant c confirm text does not follow the renamed button")
	}
	if !strings.Contains(c["member_12345"], "Savings Balance history") {
		t.Error("variant c keeps the footer decoy")
	}
}

// diff returns the sorted keys of x missing from y.
func diff(x, y map[string]bool) []string {
	var out []string
	for k := range x {
		if !y[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestVariantPagesHaveUniqueIDs(t *testing.T) {
	t.Parallel()
	for _, v := range []string{VariantA, VariantB, VariantC} {
		for name, body := range tourVariant(t, v) {
			seen := map[string]bool{}
			for _, m := range idAttr.FindAllStringSubmatch(body, -1) {
				if seen[m[1]] {
					t.Errorf("variant %s %s: duplicate id %q", v, name, m[1])
				}
				seen[m[1]] = true
			}
		}
	}
}
