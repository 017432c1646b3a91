package mockapp

import (
	"fmt"
	"hash/fnv"
	"html"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// UI drift: generated variants of the pages the reference lookup walks
// (the frameset, the Navigation frame, Member Search and Member Details),
// for measuring how replay behaves when the UI changes under it.
//
//	POST /_control/drift {"kind": "benign", "seed": N}
//	POST /_control/drift {"kind": "benign", "seed": N, "change": NAME}     NAME one of DriftBenignChanges
//	POST /_control/drift {"kind": "semantic", "seed": N, "change": NAME}   change optional: picked by seed
//	POST /_control/drift {"kind": "off"}
//	GET  /_control/drift  → {"drift": Drift|null, "decoy_hits": N, "features": [...], "changes": [...],
//	                         "benign_changes": [...]}
//
// A variant is a pure function of (kind, seed, change): the same request
// renders the same bytes on every server, and every page draws its choices
// from its own generator seeded by (seed, page), so a reload or a request
// in another order renders the same page. While a drift is set it replaces
// the rendering of those four pages whatever the variant (a, b or c); every
// other page, the forms' fields, the routes, sessions and faults are
// unchanged (a page that must show the undeclared-dialog notice is rendered
// the ordinary way). POST /_control/reset clears it.
//
// Benign variants keep every accessible role and name the reference lookup
// targets and change only what a person would not call a change: ids and
// classes (always churned), and, picked by seed (seed mod 9 is always on):
//
//   - nesting: generic wrappers, spans inside cells and controls, 0-3
//     layout tables around the data table, an empty spacer cell between
//     label and value;
//   - order: member rows, navigation links, buttons, the two frames, and
//     the two cells of a row (value first);
//   - wrappers: a named region around the record, a fieldset around the
//     form, a layout table around the frames;
//   - styling: inline styles, upper-cased labels (CSS), labels spelled with
//     no-break spaces or a trailing colon, cents in a smaller span;
//   - decoys: look-alikes elsewhere (a "Member number" field and a
//     "Savings Balance" text in the navigation frame, hidden and
//     aria-hidden "Search" buttons, a "Savings Balance" heading outside the
//     tables, a second table with other labels, links whose names only
//     start like a target's);
//   - name_source: aria-label, <label for>, aria-labelledby, <input
//     type=submit>, a link name split over spans;
//   - markup: th row headers or an ARIA table of divs, role=heading, a
//     navigation of divs instead of a list, h2 for h1.
//
// A benign variant may also name one of [DriftBenignChanges] instead of
// drawing features: a single change in how Member Details is written that
// keeps what it means (ids and classes churned, nothing else).
//
// Semantic variants change what the page means, one change each (see
// [DriftChanges]); the lookup must stop rather than answer. Duplicated
// controls lead to decoys: a second "Search" button, a second "Member
// number" field or a second "Member Search" link submits to or opens
// /content/drift/*, which counts a decoy hit and shows an archived record
// with other values, so a wrong click shows up both as a hit and as wrong
// outputs. The decoy links of benign variants count hits the same way.

// Drift kinds accepted by POST /_control/drift.
const (
	DriftBenign   = "benign"
	DriftSemantic = "semantic"
	DriftOff      = "off"
)

// Benign drift features, in the order seed mod 9 forces them on.
var driftFeatures = []string{"nesting", "order", "wrappers", "styling", "decoys", "name_source", "markup", "ids", "classes"}

// DriftChanges lists the semantic changes, sorted. Each changes one thing
// the reference lookup depends on:
//
//   - rename_*: a label or name the lookup targets is renamed (savings,
//     status and as-of row labels, the search button, the member number
//     field, the Member Search link, the Member Details heading);
//   - duplicate_*: a second control or row with the same name in the same
//     scope (search button, member number field, Member Search link, a
//     second Savings Balance row in the same table or in a "Joint account"
//     table below it);
//   - remove_*: a field is gone (savings row, status row, member number
//     field, search button);
//   - moved_value_*: the balance is shown in another row (blank with the
//     amount in an "Available Balance" row, swapped with the as-of date,
//     pointing to a share-account row, in the row below its label, or
//     moved into the label cell);
//   - currency_*: the balance in another currency format ("1.234,56 €",
//     "€1.234,56", "1 234,56 €", "EUR 1,234.56", "£1,234.56", or a bare
//     "1,234.56" in a balances table whose column header says "Balance
//     (EUR)", or "1,234.56 CAD" in a balances table whose column header says
//     "Balance (USD)": the currency near the value wins).
var DriftChanges = []string{
	"currency_eu", "currency_eu_prefix", "currency_eu_space", "currency_eur_code", "currency_gbp", "currency_header",
	"currency_near_value",
	"duplicate_member_field", "duplicate_nav_link", "duplicate_savings_row", "duplicate_savings_table",
	"duplicate_search_button",
	"moved_value_blank", "moved_value_into_label", "moved_value_next_row", "moved_value_share_row", "moved_value_swapped",
	"remove_member_field", "remove_savings_row", "remove_search_button", "remove_status_row",
	"rename_as_of_label", "rename_heading", "rename_member_field", "rename_nav_link",
	"rename_savings_label", "rename_search_button", "rename_status_label",
}

// DriftBenignChanges lists the named benign changes of Member Details,
// sorted. The values stay the fixture's, and a careful reader reads them
// the same:
//
//   - label_value_one_node: no table; each field is one paragraph whose
//     single text node holds label and value ("Savings Balance: $1,234.56");
//   - label_value_split: no table; each field is a paragraph of two spans,
//     "<span>Savings Balance:</span> <span>$1,234.56</span>";
//   - usd_in_header: the balance, bare ("1,234.56"), in a balances table
//     whose column header says "Balance (USD)".
var DriftBenignChanges = []string{"label_value_one_node", "label_value_split", "usd_in_header"}

// Paths of the decoys that duplicated controls and decoy links lead to.
const (
	driftDecoyPath  = "/content/drift/decoy"
	driftSearchPath = "/content/drift/search"
)

// Renames picked by seed.
var (
	driftRenames = map[string][]string{
		"rename_savings_label": {"Savings Bal.", "Share Savings", "Savings Total", "Savings Goal"},
		"rename_status_label":  {"Account Status", "State", "Standing"},
		"rename_as_of_label":   {"Balance date", "As at", "Updated"},
		"rename_search_button": {"Find member", "Go", "Look up"},
		"rename_member_field":  {"Member ID", "Account number", "Member no."},
		"rename_nav_link":      {"Member Lookup", "Find a Member", "Search Members"},
		"rename_heading":       {"Member Summary", "Member Profile", "Account Details"},
	}
)

// Drift is a drift variant, as the control API reports it.
type Drift struct {
	Kind     string   `json:"kind"`
	Seed     int64    `json:"seed"`
	Change   string   `json:"change,omitempty"`
	Detail   string   `json:"detail,omitempty"`   // the change's parameter, e.g. the new label
	Features []string `json:"features,omitempty"` // benign features on (semantic variants also churn ids and classes)
	// Layout lists, per page (root, nav, search, member), the choices the
	// variant makes beyond ids, classes and inline styles, as rendered for
	// a fresh search and member 12345.
	Layout map[string][]string `json:"layout,omitempty"`
}

// driftState is the drift part of the server state; Server.mu guards it.
type driftState struct {
	plan *driftPlan
	hits int // decoy hits since the drift was set
}

// driftPlan is a resolved variant: which features are on and the change's
// parameters.
type driftPlan struct {
	Drift
	on map[string]bool
}

func (p *driftPlan) has(feature string) bool { return p.on[feature] }

// newDriftPlan resolves (kind, seed, change); change is "", one of
// DriftChanges for a semantic variant or one of DriftBenignChanges for a
// benign one.
func newDriftPlan(kind string, seed int64, change string) *driftPlan {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6d656d6265726465))
	p := &driftPlan{Drift: Drift{Kind: kind, Seed: seed}, on: map[string]bool{"ids": true, "classes": true}}
	switch kind {
	case DriftBenign:
		if change != "" {
			p.Change = change
			switch change {
			case "label_value_one_node":
				p.Detail = `"Savings Balance: $1,234.56" in one text node`
			case "label_value_split":
				p.Detail = `"<span>Savings Balance:</span> <span>$1,234.56</span>"`
			case "usd_in_header":
				p.Detail = `1,234.56 under a "Balance (USD)" column header`
			}
			break
		}
		for _, f := range driftFeatures {
			if rng.IntN(2) == 0 {
				p.on[f] = true
			}
		}
		p.on[driftFeatures[seed%int64(len(driftFeatures))]] = true
	case DriftSemantic:
		if change == "" {
			change = DriftChanges[seed%int64(len(DriftChanges))]
		}
		p.Change = change
		if rng.IntN(2) == 0 {
			p.on["styling"] = true
		}
		if names := driftRenames[change]; len(names) > 0 {
			p.Detail = names[rng.IntN(len(names))]
		}
		switch {
		case change == "currency_header":
			p.Detail = `1,234.56 under a "Balance (EUR)" column header`
		case change == "currency_near_value":
			p.Detail = `1,234.56 CAD under a "Balance (USD)" column header`
		case strings.HasPrefix(change, "currency_"):
			p.Detail = driftCurrency(change, 123456)
		}
	}
	for _, f := range driftFeatures {
		if p.on[f] {
			p.Features = append(p.Features, f)
		}
	}
	p.Layout = map[string][]string{}
	for name, notes := range p.layout() {
		if len(notes) > 0 {
			p.Layout[name] = notes
		}
	}
	return p
}

// layout renders the lookup's pages once to collect their choices.
func (p *driftPlan) layout() map[string][]string {
	_, root := p.rootPage()
	_, nav := p.navPage(navData{Links: navLinks})
	_, search := p.searchPageAlert(searchData{}, "")
	_, member := p.memberPage(members["12345"], false)
	return map[string][]string{"root": root, "nav": nav, "search": search, "member": member}
}

// driftCurrency formats cents the way a currency_* change shows money.
func driftCurrency(change string, cents int64) string {
	whole, frac := cents/100, twoDigits(cents%100)
	eu := strings.ReplaceAll(groupThousands(whole), ",", ".")
	switch change {
	case "currency_eu":
		return eu + "," + frac + " €"
	case "currency_eu_prefix":
		return "€" + eu + "," + frac
	case "currency_eu_space":
		return strings.ReplaceAll(groupThousands(whole), ",", "\u202f") + "," + frac + "\u00a0€"
	case "currency_eur_code":
		return "EUR " + groupThousands(whole) + "." + frac
	case "currency_gbp":
		return "£" + groupThousands(whole) + "." + frac
	case "currency_header", "usd_in_header":
		return groupThousands(whole) + "." + frac
	case "currency_near_value":
		return groupThousands(whole) + "." + frac + " CAD"
	}
	return formatMoney(cents)
}

// driftRoutes registers the control route and the decoys.
func (s *Server) driftRoutes(mux *http.ServeMux) {
	handle(mux, controlPrefix+"drift", methods{http.MethodGet: s.handleDriftState, http.MethodPost: s.handleDrift})
	handle(mux, driftDecoyPath, methods{http.MethodGet: s.handleDriftDecoy})
	handle(mux, driftSearchPath, methods{http.MethodPost: s.handleDriftSearch})
}

// DriftStatus is the body of every /_control/drift answer: the variant in
// force (nil when drift is off), the decoy hits since it was set, and the
// features and changes the control API accepts.
type DriftStatus struct {
	Drift         *Drift   `json:"drift"`
	DecoyHits     int      `json:"decoy_hits"`
	Features      []string `json:"features"`
	Changes       []string `json:"changes"`
	BenignChanges []string `json:"benign_changes"`
}

func (s *Server) driftStatus() DriftStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := DriftStatus{DecoyHits: s.st.drift.hits, Features: driftFeatures, Changes: DriftChanges, BenignChanges: DriftBenignChanges}
	if p := s.st.drift.plan; p != nil {
		d := p.Drift
		v.Drift = &d
	}
	return v
}

func (s *Server) currentDrift() *driftPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.drift.plan
}

func (s *Server) decoyHit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.drift.hits++
}

func (s *Server) handleDriftState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.driftStatus())
}

// handleDrift answers POST /_control/drift (see the comment at the top of
// this file). A refused request is 400 naming the field: kind, seed, change
// or body.
func (s *Server) handleDrift(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Kind   *string `json:"kind"`
		Seed   *int64  `json:"seed"`
		Change *string `json:"change"`
	}
	if cerr := decodeControl(r, &req); cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	var cerr *controlError
	switch {
	case req.Kind == nil:
		cerr = &controlError{Error: fmt.Sprintf("kind: required; want %q, %q or %q", DriftBenign, DriftSemantic, DriftOff), Field: "kind"}
	case *req.Kind != DriftBenign && *req.Kind != DriftSemantic && *req.Kind != DriftOff:
		cerr = &controlError{Error: fmt.Sprintf("kind: %q; want %q, %q or %q", *req.Kind, DriftBenign, DriftSemantic, DriftOff), Field: "kind"}
	case *req.Kind == DriftOff && req.Seed != nil:
		cerr = &controlError{Error: "seed: not allowed with kind \"off\"", Field: "seed"}
	case *req.Kind == DriftOff && req.Change != nil:
		cerr = &controlError{Error: "change: not allowed with kind \"off\"", Field: "change"}
	case *req.Kind != DriftOff && req.Seed == nil:
		cerr = &controlError{Error: "seed: required (a number >= 0; the same seed renders the same variant)", Field: "seed"}
	case *req.Kind != DriftOff && *req.Seed < 0:
		cerr = &controlError{Error: fmt.Sprintf("seed: %d is negative", *req.Seed), Field: "seed"}
	case *req.Kind == DriftBenign && req.Change != nil && !slices.Contains(DriftBenignChanges, *req.Change):
		cerr = &controlError{Error: fmt.Sprintf("change: %q is not a benign change; want one of %s", *req.Change, strings.Join(DriftBenignChanges, ", ")), Field: "change"}
	case *req.Kind == DriftSemantic && req.Change != nil && !slices.Contains(DriftChanges, *req.Change):
		cerr = &controlError{Error: fmt.Sprintf("change: unknown change %q; want one of %s", *req.Change, strings.Join(DriftChanges, ", ")), Field: "change"}
	}
	if cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	var plan *driftPlan
	if *req.Kind != DriftOff {
		change := ""
		if req.Change != nil {
			change = *req.Change
		}
		plan = newDriftPlan(*req.Kind, *req.Seed, change)
	}
	s.mu.Lock()
	s.st.drift = driftState{plan: plan}
	s.mu.Unlock()
	if plan != nil {
		s.logger.Info("drift set", "kind", plan.Kind, "seed", plan.Seed, "change", plan.Change)
	} else {
		s.logger.Info("drift off")
	}
	writeJSON(w, http.StatusOK, s.driftStatus())
}

// handleDriftDecoy is where decoy links lead: it counts a hit and shows a
// search form that finds archived records.
func (s *Server) handleDriftDecoy(w http.ResponseWriter, r *http.Request) {
	s.decoyHit()
	s.logger.Info("drift decoy hit", "path", r.URL.Path)
	p := s.currentDrift()
	if p == nil {
		p = newDriftPlan(DriftBenign, 0, "")
	}
	page, _ := p.searchPage(searchData{}, true)
	writeHTML(w, http.StatusOK, page)
}

// handleDriftSearch is the member search behind duplicated search
// controls: the archive scope or the duplicate member field is a decoy hit
// and shows an archived record with other values; anything else is the
// ordinary member search.
func (s *Server) handleDriftSearch(w http.ResponseWriter, r *http.Request) {
	alt := r.PostFormValue("member_alt")
	if r.PostFormValue("scope") != "archive" && alt == "" {
		s.handleSearch(w, r)
		return
	}
	s.decoyHit()
	s.logger.Info("drift decoy hit", "path", r.URL.Path)
	number := r.PostFormValue("member")
	if alt != "" {
		number = alt
	}
	m, ok := members[number]
	if !ok || !m.HasSavings {
		m = members["12345"]
	}
	p := s.currentDrift()
	if p == nil {
		p = newDriftPlan(DriftBenign, 0, "")
	}
	page, _ := p.memberPage(m, true)
	writeHTML(w, http.StatusOK, page)
}

func writeHTML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// renderDrift renders p as the current drift variant and reports whether it
// did; it leaves every page but the four of the lookup to render.
func (s *Server) renderDrift(w http.ResponseWriter, r *http.Request, pg page) bool {
	p := s.currentDrift()
	if p == nil {
		return false
	}
	var body string
	switch pg.tmpl {
	case tmplRoot:
		body, _ = p.rootPage()
	case tmplNav:
		d, _ := pg.data.(navData)
		d.Links = navLinks // the lookup's links only: the task-shape links are not drifted
		body, _ = p.navPage(d)
	case tmplSearch:
		d, _ := pg.data.(searchData)
		body, _ = p.searchPageAlert(d, pg.alert)
	case tmplMember:
		m, ok := members[r.PathValue("id")]
		if !ok {
			return false
		}
		body, _ = p.memberPage(m, false)
	default:
		return false
	}
	status := pg.status
	if status == 0 {
		status = http.StatusOK
	}
	writeHTML(w, status, body)
	return true
}

// dw writes one drift page. Its generator is seeded by (seed, kind, change,
// page), so a page does not depend on which pages were rendered before.
type dw struct {
	strings.Builder
	p     *driftPlan
	rng   *rand.Rand
	notes []string // the choices made, for GET /_control/drift
}

func (w *dw) note(format string, args ...any) {
	w.notes = append(w.notes, fmt.Sprintf(format, args...))
}

func (p *driftPlan) writer(page string) *dw {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%s", p.Kind, p.Change, page)
	return &dw{p: p, rng: rand.New(rand.NewPCG(uint64(p.Seed), h.Sum64()))}
}

var esc = html.EscapeString

// tok returns a meaningless id or class token.
func (w *dw) tok() string {
	return fmt.Sprintf("%c%07x", 'a'+rune(w.rng.IntN(26)), w.rng.Uint32()>>4)
}

var driftStyles = []string{
	"color:#1d3557", "padding:2px 6px", "margin:1px 0", "font-size:105%", "letter-spacing:.02em",
	"background:#f4f4f4", "border-bottom:1px dotted #bbb", "font-weight:600", "font-family:Georgia,serif",
	"line-height:1.4", "border-left:3px solid #e9c46a",
}

// attrs returns churned id, class and style attributes (a leading space
// included), as the plan's features ask.
func (w *dw) attrs() string { return w.attrsStyle("") }

// attrsStyle is attrs with style declarations that must be there (one
// style attribute holds both).
func (w *dw) attrsStyle(must string) string {
	var b strings.Builder
	if w.p.has("ids") && w.rng.IntN(3) > 0 {
		fmt.Fprintf(&b, ` id="%s"`, w.tok())
	}
	if w.p.has("classes") {
		n := 1 + w.rng.IntN(3)
		toks := make([]string, n)
		for i := range toks {
			toks[i] = w.tok()
		}
		fmt.Fprintf(&b, ` class="%s"`, strings.Join(toks, " "))
	}
	var style []string
	if w.p.has("styling") && w.rng.IntN(2) == 0 {
		style = append(style, driftStyles[w.rng.IntN(len(driftStyles))])
	}
	if must != "" {
		style = append(style, must)
	}
	if len(style) > 0 {
		fmt.Fprintf(&b, ` style="%s"`, strings.Join(style, ";"))
	}
	return b.String()
}

// open writes 0..3 generic wrappers (none without nesting) and returns
// their closing tags.
func (w *dw) open() string {
	if !w.p.has("nesting") {
		return ""
	}
	var closers []string
	for range w.rng.IntN(4) {
		tag := []string{"div", "section", "div"}[w.rng.IntN(3)]
		extra := ""
		if tag == "div" && w.rng.IntN(3) == 0 {
			extra = ` role="presentation"`
		}
		fmt.Fprintf(w, "<%s%s%s>", tag, extra, w.attrs())
		closers = append(closers, "</"+tag+">")
	}
	slices.Reverse(closers)
	return strings.Join(closers, "")
}

// inline escapes text and wraps it in 0..2 spans when nesting is on.
func (w *dw) inline(text string) string { return w.wrapInline(esc(text)) }

// wrapInline wraps markup in 0..2 spans when nesting is on.
func (w *dw) wrapInline(s string) string {
	if !w.p.has("nesting") {
		return s
	}
	for range w.rng.IntN(3) {
		s = "<span" + w.attrs() + ">" + s + "</span>"
	}
	return s
}

func (w *dw) head(title string) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", esc(title))
	w.WriteString("<style>body{font-family:sans-serif;margin:1em}td,th{padding:2px 8px;vertical-align:top;text-align:left}" +
		"iframe{border:1px solid #999;height:95vh}iframe[name=nav]{width:18%}iframe[name=content]{width:78%}" +
		".hide{display:none}</style>\n</head>\n")
	fmt.Fprintf(w, "<body%s>\n", w.attrs())
}

func (w *dw) tail() (string, []string) {
	w.WriteString("\n</body>\n</html>\n")
	return w.String(), w.notes
}

// decoyLink writes a link that only a wrong click follows.
func (w *dw) decoyLink(text, target string) {
	t := ""
	if target != "" {
		t = ` target="` + target + `"`
	}
	fmt.Fprintf(w, `<p%s><a href="%s"%s%s>%s</a></p>`, w.attrs(), driftDecoyPath, t, w.attrs(), esc(text))
}

func (p *driftPlan) rootPage() (string, []string) {
	w := p.writer("root")
	w.head("MemberDesk")
	nav := fmt.Sprintf(`<iframe name="nav" title="Navigation" src="/nav"%s></iframe>`, w.attrs())
	content := fmt.Sprintf(`<iframe name="content" title="Workspace" src="/content/home"%s></iframe>`, w.attrs())
	frames := []string{nav, content}
	if p.has("order") && w.rng.IntN(2) == 0 {
		frames[0], frames[1] = frames[1], frames[0]
		w.note("content frame before nav frame")
	}
	closers := w.open()
	if p.has("wrappers") {
		w.note("frames in a layout table")
		fmt.Fprintf(w, "<table%s><tr>", w.attrs())
		for _, f := range frames {
			fmt.Fprintf(w, "<td%s><div%s>%s</div></td>", w.attrs(), w.attrs(), f)
		}
		w.WriteString("</tr></table>")
	} else {
		fmt.Fprintf(w, "<div%s>%s\n%s</div>", w.attrs(), frames[0], frames[1])
	}
	w.WriteString(closers)
	return w.tail()
}

func (p *driftPlan) navPage(d navData) (string, []string) {
	w := p.writer("nav")
	w.head("Navigation - MemberDesk")
	links := slices.Clone(d.Links)
	if p.has("order") {
		w.rng.Shuffle(len(links), func(i, j int) { links[i], links[j] = links[j], links[i] })
		names := make([]string, len(links))
		for i, l := range links {
			names[i] = l.Text
		}
		w.note("links in the order %s", strings.Join(names, ", "))
	}
	linkHTML := func(l link) string {
		text := l.Text
		if l.Href == searchPath && p.Change == "rename_nav_link" {
			text = p.Detail
		}
		inner := w.inline(text)
		if p.has("name_source") && strings.Contains(text, " ") && w.rng.IntN(2) == 0 {
			first, rest, _ := strings.Cut(text, " ")
			inner = "<span>" + esc(first) + "</span> <span>" + esc(rest) + "</span>"
			w.note("link %q split over two spans", text)
		}
		return fmt.Sprintf(`<a href="%s" target="content"%s>%s</a>`, l.Href, w.attrs(), inner)
	}
	search := fmt.Sprintf(`<form method="get" action="/nav"%s><input type="search" name="q" title="Search this site" value="%s"%s> <button type="submit"%s>Search</button></form>`,
		w.attrs(), esc(d.Query), w.attrs(), w.attrs())
	if d.Query != "" {
		search += fmt.Sprintf("<p%s>No site pages match %s.</p>", w.attrs(), esc(d.Query))
	}
	searchFirst := p.has("order") && w.rng.IntN(2) == 0
	if searchFirst {
		w.note("site search before the links")
		w.WriteString(search + "\n")
	}
	closers := w.open()
	useList := !p.has("markup") || w.rng.IntN(2) == 0
	if !useList {
		w.note("links in divs, not a list")
	}
	if useList {
		fmt.Fprintf(w, "<ul%s>", w.attrs())
	} else {
		fmt.Fprintf(w, "<div%s>", w.attrs())
	}
	for _, l := range links {
		item := linkHTML(l)
		if useList {
			fmt.Fprintf(w, "<li%s>%s</li>", w.attrs(), item)
		} else {
			fmt.Fprintf(w, "<div%s>%s</div>", w.attrs(), item)
		}
		if l.Href == searchPath && p.Change == "duplicate_nav_link" {
			dup := fmt.Sprintf(`<a href="%s" target="content"%s>Member Search</a>`, driftDecoyPath, w.attrs())
			if useList {
				fmt.Fprintf(w, "<li%s>%s</li>", w.attrs(), dup)
			} else {
				fmt.Fprintf(w, "<div%s>%s</div>", w.attrs(), dup)
			}
		}
	}
	if useList {
		w.WriteString("</ul>")
	} else {
		w.WriteString("</div>")
	}
	w.WriteString(closers + "\n")
	if !searchFirst {
		w.WriteString(search + "\n")
	}
	if p.has("decoys") {
		// Look-alikes of the content frame's targets, in another frame, and
		// a link whose name only starts like the real one.
		w.note(`decoys: a "Member number" field, a "Savings Balance" text, a "Member Search help" link`)
		fmt.Fprintf(w, `<form method="get" action="/nav"%s><input type="text" name="q" title="Member number"%s> <button type="submit">Search</button></form>`, w.attrs(), w.attrs())
		fmt.Fprintf(w, "<p%s>Savings Balance</p>", w.attrs())
		w.decoyLink("Member Search help", "content")
	}
	return w.tail()
}

// searchPageAlert is the member search page with the page's alert.
func (p *driftPlan) searchPageAlert(d searchData, alert string) (string, []string) {
	return p.searchPageWith(d, alert, false)
}

// searchPage is the member search page; archive makes it the decoy form
// that finds archived records.
func (p *driftPlan) searchPage(d searchData, archive bool) (string, []string) {
	return p.searchPageWith(d, "", archive)
}

func (p *driftPlan) searchPageWith(d searchData, alert string, archive bool) (string, []string) {
	w := p.writer("search")
	w.head("Member Search - MemberDesk")
	closers := w.open()
	if p.has("markup") && w.rng.IntN(2) == 0 {
		w.note("heading h2")
		fmt.Fprintf(w, "<h2%s>Member Search</h2>\n", w.attrs())
	} else {
		fmt.Fprintf(w, "<h1%s>%s</h1>\n", w.attrs(), w.inline("Member Search"))
	}
	if alert != "" {
		fmt.Fprintf(w, `<p role="alert"%s>%s</p>`+"\n", w.attrs(), esc(alert))
	}
	if d.Status != "" {
		fmt.Fprintf(w, `<p role="status"%s>%s</p>`+"\n", w.attrs(), esc(d.Status))
	}
	action := searchPath
	if archive || p.Change == "duplicate_member_field" {
		action = driftSearchPath
	}
	fmt.Fprintf(w, `<form method="post" action="%s"%s>`, action, w.attrs())
	if archive {
		w.WriteString(`<input type="hidden" name="scope" value="archive">`)
	}
	fieldset := p.has("wrappers") && w.rng.IntN(2) == 0
	if fieldset {
		w.note("form in a fieldset")
		fmt.Fprintf(w, "<fieldset%s>", w.attrs())
	}
	fc := w.open()
	fieldName := "Member number"
	if p.Change == "rename_member_field" {
		fieldName = p.Detail
	}
	if p.Change != "remove_member_field" {
		w.WriteString(p.memberField(w, "member", fieldName, d.Member))
	}
	if p.Change == "duplicate_member_field" {
		fmt.Fprintf(w, ` <input type="text" name="member_alt" title="Member number" autocomplete="off"%s>`, w.attrs())
	}
	w.WriteString(fc)
	buttonName := "Search"
	if p.Change == "rename_search_button" {
		buttonName = p.Detail
	}
	var buttons []string
	if p.Change != "remove_search_button" {
		if p.has("name_source") && w.rng.IntN(2) == 0 {
			w.note("search button is an <input type=submit>")
			buttons = append(buttons, fmt.Sprintf(`<input type="submit" value="%s"%s>`, esc(buttonName), w.attrs()))
		} else {
			buttons = append(buttons, fmt.Sprintf(`<button type="submit"%s>%s</button>`, w.attrs(), w.inline(buttonName)))
		}
	}
	if p.Change == "duplicate_search_button" {
		dup := fmt.Sprintf(`<button type="submit" name="scope" value="archive" formaction="%s"%s>Search</button>`, driftSearchPath, w.attrs())
		if w.rng.IntN(2) == 0 {
			buttons = append([]string{dup}, buttons...)
		} else {
			buttons = append(buttons, dup)
		}
	}
	clear := fmt.Sprintf(`<button type="reset"%s>Clear</button>`, w.attrs())
	if p.has("order") && w.rng.IntN(2) == 0 {
		w.note("Clear before Search")
		buttons = append([]string{clear}, buttons...)
	} else {
		buttons = append(buttons, clear)
	}
	fmt.Fprintf(w, "\n<div%s>%s</div>", w.attrs(), strings.Join(buttons, " "))
	if fieldset {
		w.WriteString("</fieldset>")
	}
	w.WriteString("</form>\n")
	if p.has("decoys") {
		// Hidden duplicates are not in the accessibility tree; the others
		// have other names or roles.
		w.note(`decoys: hidden and aria-hidden "Search" buttons, a "Search help" heading, a "Search tips" link`)
		w.WriteString(`<div class="hide"><button type="button">Search</button></div>`)
		w.WriteString(`<button type="button" hidden>Search</button>`)
		w.WriteString(`<div aria-hidden="true"><button type="button" tabindex="-1">Search</button></div>`)
		fmt.Fprintf(w, "<h2%s>Search help</h2>", w.attrs())
		w.decoyLink("Search tips", "")
	}
	w.WriteString(closers)
	return w.tail()
}

// memberField writes the member number text field named name, its
// accessible name from the source the plan picks.
func (p *driftPlan) memberField(w *dw, field, name, value string) string {
	attrs := w.attrs()
	source := 0
	if p.has("name_source") {
		source = 1 + w.rng.IntN(3)
		w.note("member field named by %s", []string{"", "aria-label", "<label for>", "aria-labelledby"}[source])
	}
	v := esc(value)
	switch source {
	case 1:
		return fmt.Sprintf(`<input type="text" name="%s" aria-label="%s" value="%s" autocomplete="off"%s>`, field, esc(name), v, attrs)
	case 2:
		id := w.tok()
		return fmt.Sprintf(`<label for="%s">%s</label> <input type="text" id="%s" name="%s" value="%s" autocomplete="off">`, id, esc(name), id, field, v)
	case 3:
		id := w.tok()
		return fmt.Sprintf(`<span id="%s">%s</span> <input type="text" name="%s" aria-labelledby="%s" value="%s" autocomplete="off"%s>`, id, esc(name), field, id, v, attrs)
	}
	return fmt.Sprintf(`<input type="text" name="%s" title="%s" value="%s" autocomplete="off"%s>`, field, esc(name), v, attrs)
}

// The values an archived (decoy) record shows instead of the member's.
const (
	archivedSavings = 987654
	archivedStatus  = "Closed"
	archivedAsOf    = "01/31/2019"
)

// memberPage is Member Details for m; archive shows the decoy values.
// The plan's random choices are drawn in a fixed order (row order, then
// the record's markup, then the decoys), so a seed renders one page.
func (p *driftPlan) memberPage(m member, archive bool) (string, []string) {
	w := p.writer("member")
	w.head("Member Details - MemberDesk")
	rows, money := p.memberRows(m, archive)
	rows, extra, extraHeader := p.changeMemberRows(rows, money)
	if p.has("order") && p.Change != "moved_value_next_row" {
		w.rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		labels := make([]string, len(rows))
		for i, r := range rows {
			labels[i] = r.label
		}
		w.note("rows in the order %s", strings.Join(labels, ", "))
	}
	closers := w.open()
	p.writeMemberRecord(w, m.Number, rows, extra, extraHeader)
	if !m.HasSavings {
		fmt.Fprintf(w, "\n<p%s>No savings account on file</p>", w.attrs())
	}
	w.WriteString(closers + "\n")
	if p.has("decoys") {
		// Outside every table: look-alike texts and links elsewhere, and a
		// second table with other labels.
		w.note(`decoys: a "Savings Balance" heading, a Checking/Loan Balance table, a "Savings Balance history" link, all outside the record`)
		fmt.Fprintf(w, "<div%s><h2%s>Savings Balance</h2><p%s>Balances are updated nightly.</p></div>", w.attrs(), w.attrs(), w.attrs())
		fmt.Fprintf(w, "<table%s><tr><td>Checking Balance</td><td>$310.00</td></tr><tr><td>Loan Balance</td><td>$4,500.00</td></tr></table>", w.attrs())
		w.decoyLink("Savings Balance history", "")
	}
	fmt.Fprintf(w, "\n<p%s>MemberDesk core banking</p>", w.attrs())
	return w.tail()
}

// memberRows are m's label/value rows (the archived record's values when
// archive) with a renamed label applied, and the balance as the plan's
// change formats it.
func (p *driftPlan) memberRows(m member, archive bool) (rows []drow, money string) {
	savings, status, asOfText := m.Savings, m.Status, asOf
	if archive {
		savings, status, asOfText = archivedSavings, archivedStatus, archivedAsOf
	}
	money = formatMoney(savings)
	if strings.HasPrefix(p.Change, "currency_") || p.Change == "usd_in_header" {
		money = driftCurrency(p.Change, savings)
	}
	rows = []drow{{label: "Member number", value: m.Number}, {label: "Name", value: m.Name}, {label: "Status", value: status}}
	if m.HasSavings {
		rows = append(rows, drow{label: "Savings Balance", value: money})
	}
	rows = append(rows, drow{label: "As of", value: asOfText})
	rename := map[string]string{"rename_savings_label": "Savings Balance", "rename_status_label": "Status", "rename_as_of_label": "As of"}
	for i := range rows {
		if rows[i].label == rename[p.Change] {
			rows[i].label = p.Detail
		}
	}
	return rows, money
}

// changeMemberRows applies the plan's change to the rows: a row removed,
// duplicated or moved, or a value moved elsewhere. extra is a second table
// after the first (the balance in its own table, or a second savings
// account) headed extraHeader.
func (p *driftPlan) changeMemberRows(rows []drow, money string) (_ []drow, extra []drow, extraHeader string) {
	idx := func(label string) int {
		return slices.IndexFunc(rows, func(r drow) bool { return r.label == label })
	}
	switch p.Change {
	case "remove_savings_row":
		if i := idx("Savings Balance"); i >= 0 {
			rows = slices.Delete(rows, i, i+1)
		}
	case "remove_status_row":
		if i := idx("Status"); i >= 0 {
			rows = slices.Delete(rows, i, i+1)
		}
	case "duplicate_savings_row":
		if i := idx("Savings Balance"); i >= 0 {
			rows = slices.Insert(rows, i+1, drow{label: "Savings Balance", value: formatMoney(25000)})
		}
	case "duplicate_savings_table":
		if idx("Savings Balance") >= 0 {
			extra, extraHeader = []drow{{label: "Savings Balance", value: formatMoney(25000)}}, "Joint account"
		}
	case "currency_header", "currency_near_value", "usd_in_header":
		if i := idx("Savings Balance"); i >= 0 {
			extra, extraHeader = rows[i:i+1:i+1], "Balance (EUR)"
			if p.Change != "currency_header" {
				extraHeader = "Balance (USD)"
			}
			rows = slices.Delete(slices.Clone(rows), i, i+1)
		}
	case "moved_value_blank":
		if i := idx("Savings Balance"); i >= 0 {
			rows[i].value = ""
			rows = slices.Insert(rows, i+1, drow{label: "Available Balance", value: money})
		}
	case "moved_value_share_row":
		if i := idx("Savings Balance"); i >= 0 {
			rows[i].value = "See Share Account 00"
			rows = slices.Insert(rows, i+1, drow{label: "Share Account 00", value: money})
		}
	case "moved_value_next_row":
		if i := idx("Savings Balance"); i >= 0 {
			rows[i] = drow{label: "Savings Balance", alone: true}
			rows = slices.Insert(rows, i+1, drow{value: money})
		}
	case "moved_value_swapped":
		if i, j := idx("Savings Balance"), idx("As of"); i >= 0 && j >= 0 {
			rows[i].value, rows[j].value = rows[j].value, rows[i].value
		}
	case "moved_value_into_label":
		if i := idx("Savings Balance"); i >= 0 {
			rows[i].label, rows[i].value = "Savings Balance "+money, ""
		}
	}
	return rows, extra, extraHeader
}

// writeMemberRecord writes the heading and the record: the data table (or
// label/value paragraphs) in the wrappers and layout tables the plan
// picks, then the extra table.
func (p *driftPlan) writeMemberRecord(w *dw, number string, rows, extra []drow, extraHeader string) {
	heading := "Member Details"
	if p.Change == "rename_heading" {
		heading = p.Detail
	}
	if p.has("markup") && w.rng.IntN(2) == 0 {
		w.note("heading is a div with role=heading")
		fmt.Fprintf(w, `<div role="heading" aria-level="1"%s>%s</div>`+"\n", w.attrs(), esc(heading))
	} else {
		fmt.Fprintf(w, "<h1%s>%s</h1>\n", w.attrs(), w.inline(heading))
	}
	// The identity heading draws nothing from the plan's random source, so
	// a seed renders the rest of the page as it always did.
	fmt.Fprintf(w, "<h2>Member %s</h2>\n", esc(number))
	region := p.has("wrappers") && w.rng.IntN(2) == 0
	if region {
		w.note(`record in a region named "Member record"`)
		fmt.Fprintf(w, `<section aria-label="Member record"%s>`, w.attrs())
	}
	layouts := 0
	if p.has("nesting") {
		layouts = w.rng.IntN(4)
		if layouts > 0 {
			w.note("%d layout table(s) around the data table", layouts)
		}
	}
	for range layouts {
		fmt.Fprintf(w, "<table%s><tr><td%s>", w.attrs(), w.attrs())
	}
	t := p.newDataTable(w)
	switch p.Change {
	case "label_value_one_node", "label_value_split":
		writeLabelValues(w, rows, p.Change == "label_value_split")
	default:
		t.describe(w)
		t.write(w, rows, "")
	}
	for range layouts {
		w.WriteString("</td></tr></table>")
	}
	if region {
		w.WriteString("</section>")
	}
	if len(extra) > 0 {
		w.WriteString("\n")
		t.write(w, extra, extraHeader)
	}
}

// writeLabelValues writes Member Details' fields as paragraphs instead of a
// table: "Label: value" in one text node, or split over two spans.
func writeLabelValues(w *dw, rows []drow, split bool) {
	if split {
		w.note("fields as paragraphs of two spans, label and value")
	} else {
		w.note("fields as paragraphs, label and value in one text node")
	}
	fmt.Fprintf(w, "<div%s>", w.attrs())
	for _, r := range rows {
		if split {
			fmt.Fprintf(w, "<p%s><span%s>%s:</span> <span%s>%s</span></p>\n", w.attrs(), w.attrs(), esc(r.label), w.attrs(), esc(r.value))
			continue
		}
		fmt.Fprintf(w, "<p%s>%s: %s</p>\n", w.attrs(), esc(r.label), esc(r.value))
	}
	w.WriteString("</div>")
}

// drow is one label/value row of Member Details; alone puts the label in a
// row of its own.
type drow struct {
	label, value string
	alone        bool
}

// dataTable is how a plan writes Member Details' label/value rows: a table
// of td/td or th/td, or an ARIA table of divs; labels upper-cased, spelled
// with no-break spaces or a trailing colon; cells swapped (value first) or
// with an empty spacer cell between them; cents in a smaller span.
type dataTable struct {
	markup     int    // 0 td/td, 1 th/td, 2 ARIA divs
	labelStyle string // style declarations of the label cells
	punct      int    // 0 as is, 1 no-break spaces, 2 trailing colon
	swap       bool
	spacer     bool
	splitCents bool
}

func (p *driftPlan) newDataTable(w *dw) dataTable {
	var t dataTable
	if p.has("markup") {
		t.markup = w.rng.IntN(3)
	}
	if p.has("styling") {
		if w.rng.IntN(2) == 0 {
			t.labelStyle = "text-transform:uppercase"
		}
		t.punct = w.rng.IntN(3)
		t.splitCents = w.rng.IntN(2) == 0
	}
	if p.has("order") {
		t.swap = w.rng.IntN(3) == 0
	}
	if p.has("nesting") && t.markup != 2 {
		t.spacer = w.rng.IntN(3) == 0
	}
	return t
}

func (t dataTable) describe(w *dw) {
	switch t.markup {
	case 1:
		w.note("labels in <th scope=row>")
	case 2:
		w.note("an ARIA table of divs (role table/row/cell)")
	}
	if t.labelStyle != "" {
		w.note("labels upper-cased by CSS")
	}
	switch t.punct {
	case 1:
		w.note("labels spelled with no-break spaces")
	case 2:
		w.note("labels end in a colon")
	}
	if t.splitCents {
		w.note("cents in a smaller span")
	}
	if t.swap {
		w.note("value cell before label cell")
	}
	if t.spacer {
		w.note("an empty spacer cell between label and value")
	}
}

func (t dataTable) label(w *dw, s string) string {
	if s == "" {
		return ""
	}
	switch t.punct {
	case 1:
		return w.wrapInline(strings.ReplaceAll(esc(s), " ", "&nbsp;"))
	case 2:
		return w.inline(s + ":")
	}
	return w.inline(s)
}

func (t dataTable) value(w *dw, v string) string {
	if t.splitCents && strings.HasPrefix(v, "$") && strings.Contains(v, ".") {
		whole, cents, _ := strings.Cut(v, ".")
		return esc(whole) + `<span style="font-size:80%">.` + esc(cents) + "</span>"
	}
	return w.inline(v)
}

// write writes one table of rows; header, when set, adds a header row
// ("Account", header) whose second column names the values.
func (t dataTable) write(w *dw, rows []drow, header string) {
	if t.markup == 2 {
		fmt.Fprintf(w, `<div role="table" aria-label="Member"%s>`, w.attrs())
		if header != "" {
			fmt.Fprintf(w, `<div role="row"><div role="columnheader">Account</div> <div role="columnheader">%s</div></div>`, esc(header))
		}
		for _, r := range rows {
			cells := []string{
				fmt.Sprintf(`<div role="cell"%s>%s</div>`, w.attrsStyle(t.labelStyle), t.label(w, r.label)),
				fmt.Sprintf(`<div role="cell"%s>%s</div>`, w.attrs(), t.value(w, r.value)),
			}
			if r.alone {
				cells = cells[:1]
			}
			if t.swap {
				slices.Reverse(cells)
			}
			fmt.Fprintf(w, `<div role="row"%s>%s</div>`+"\n", w.attrs(), strings.Join(cells, " "))
		}
		w.WriteString("</div>")
		return
	}
	fmt.Fprintf(w, "<table%s>", w.attrs())
	if header != "" {
		fmt.Fprintf(w, "<tr><th>Account</th><th>%s</th></tr>", esc(header))
	}
	for _, r := range rows {
		tag, scope := "td", ""
		if t.markup == 1 && r.label != "" {
			tag, scope = "th", ` scope="row"`
		}
		span := ""
		if r.alone {
			span = ` colspan="2"`
		}
		cells := []string{
			fmt.Sprintf("<%s%s%s%s>%s</%s>", tag, scope, span, w.attrsStyle(t.labelStyle), t.label(w, r.label), tag),
			fmt.Sprintf("<td%s>%s</td>", w.attrs(), t.value(w, r.value)),
		}
		if r.alone {
			cells = cells[:1]
		}
		if t.swap {
			slices.Reverse(cells)
		}
		if t.spacer && !r.alone {
			cells = slices.Insert(cells, 1, "<td></td>")
		}
		fmt.Fprintf(w, "<tr%s>%s</tr>\n", w.attrs(), strings.Join(cells, ""))
	}
	w.WriteString("</table>")
}

// String renders a drift for logs and reports: "benign#7" or
// "semantic#3:rename_heading".
func (d Drift) String() string {
	s := d.Kind + "#" + strconv.FormatInt(d.Seed, 10)
	if d.Change != "" {
		s += ":" + d.Change
	}
	return s
}
