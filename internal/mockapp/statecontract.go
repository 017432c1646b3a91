package mockapp

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/statewire"
)

// State-contract mode: MemberDesk's sign-on → member search → member
// details flow served over the automation contract of
// internal/surface/state, for surfaces that drive an application without a
// browser:
//
//	GET  /_automation/state[?after=SEQ&wait_ms=MS]   the screen as controls, app_state, seq
//	POST /_automation/act {"control": ID, "action": "click|type|select|press_key|navigate|reload",
//	                       "text": ..., "key": ..., "url": ...}
//
// There is one automation session per server, separate from the browser
// sessions (no cookie) and started afresh by POST /_control/reset (seen at
// the next automation request; seq keeps increasing across resets). It
// shares the server's fixtures (members, variant names, credentials), its
// faults, its notice and its request counters ("GET /content/search" etc.
// count the pages an act loads, as a browser's requests would). UI drift
// (/_control/drift) applies to HTML only.
//
// The screen is always the frameset ("MemberDesk", URL {base}/) with two
// frames of controls. Frame "nav": link "Member Search", link "Sign Off",
// searchbox "Search this site" and the decoy button "Search" (which only
// answers "No site pages match …" in nav). Frame "content", by screen:
//
//	signon      heading "Sign On", [alert], textbox "Operator ID", textbox "Password"
//	            (password: its value is bullets, never the text), button "Sign on"
//	home        heading "Welcome", text "Signed on as OP1001"
//	search      heading "Member Search", [alert], [status "Member not found"],
//	            textbox "Member number", button "Search" (c: "Find member"), button "Clear"
//	member      heading "Member Details", heading "Member NNNNN"; per row (variant order) a control of role row
//	            with region = its label, holding a cell named by the label and a cell
//	            named by the value whose region is the label ("Member number", "Name",
//	            "Status", "Savings Balance" (c: "Savings Bal."), "As of"); member 34567:
//	            status "No savings account on file"; link "Transfer history" (loads history)
//	history     heading "Transfer History", heading "Member NNNNN"; a table "Transfer history":
//	            a row of columnheaders "Date", "From", "To", "Amount", "Reference number",
//	            then per ledger transfer of the member, oldest first, a row whose region
//	            is its reference number holding one cell per column (name = the value,
//	            region = the column header); no transfer: status "No transfers on file";
//	            link "Member details" (back). Read-only; it shows the ledger as it is,
//	            write faults included (the transfer pages and their faults are HTML only)
//	restricted  heading "Restricted Record", status "This record is restricted. Refer to a supervisor."
//	not found   heading "Member Not Found", status "Member not found" (http_status 404)
//	invalid     heading "Invalid Member Number", alert "Invalid member number" (400)
//	bad gateway heading "Bad Gateway", text "The core system did not respond." (502)
//	missing     heading "Not Found", text naming the path (404): any other path,
//	            including the sub-account and transfer pages (HTML only)
//
// and, while the notice is pending, a dialog "Notice" with its text and a
// button "Continue". Ids are "n<G>.<name>" and "c<G>.<name>", G counting
// the frame's page loads, so an id of a replaced page is answered 404.
//
// Acts load pages as the browser would: clicking a nav link GETs its page,
// "Sign on" and "Search" (or Enter in their fields) POST their form,
// "Continue" POSTs the notice acknowledgement, navigate GETs the path of its
// URL in the content frame ("/" is the home page), reload reloads both
// frames; redirects are followed and every page load passes the session
// gate and the content faults in the HTML order: slow delays the act 3 s,
// transient_load shows the bad gateway screen and answers the act 502,
// session_timeout signs the session off and shows sign-on; undeclared_dialog
// raises the notice on a page load and, while it is pending, form posts are
// swallowed; validation_error answers a form post with its form, the
// rejection alert and http_status 422 (the act itself answers 200: it was
// performed). Typing never loads a page.
//
// app_state is {"screen", "path", "signed_on", "member", "http_status",
// "notice", "variant"}: the screen name above, the content path a reload
// loads, the member number of a member or history screen. It never holds a credential.

// Automation routes.
const (
	automationStatePath = statewire.StatePath
	automationActPath   = statewire.ActPath
	// automationSessionPath starts a fresh automation session, the contract's
	// equivalent of a new browser context: signed off, on the sign-on screen.
	automationSessionPath = "/_automation/session"
	// automationMaxWait bounds one long poll.
	automationMaxWait = 30 * time.Second
	// automationResync is how often a long poll checks for a reset.
	automationResync = 250 * time.Millisecond
)

// Screens of the state-contract mode.
const (
	screenSignon     = "signon"
	screenHome       = "home"
	screenSearch     = "search"
	screenMember     = "member"
	screenHistory    = "history"
	screenRestricted = "restricted"
	screenNotFound   = "member_not_found"
	screenInvalid    = "invalid_member"
	screenBadGateway = "bad_gateway"
	screenMissing    = "not_found"
)

// automationRoutes registers the state-contract endpoints.
func (s *Server) automationRoutes(mux *http.ServeMux) {
	a := &automation{s: s, changed: make(chan struct{})}
	handle(mux, automationStatePath, methods{http.MethodGet: a.handleState})
	handle(mux, automationActPath, methods{http.MethodPost: a.handleAct})
	handle(mux, automationSessionPath, methods{http.MethodPost: a.handleSession})
}

// handleSession answers POST /_automation/session: the session starts over,
// signed off, as a new browser context would.
func (a *automation) handleSession(w http.ResponseWriter, r *http.Request) {
	a.act.Lock()
	defer a.act.Unlock()
	a.mu.Lock()
	a.sync()
	a.sess = autoSession{
		screen: screenSignon, path: signonPath, httpStatus: http.StatusOK,
		content: 1, nav: 1, fields: map[string]string{},
	}
	a.bump()
	st := a.render(baseURL(r))
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, st)
}

// automation is the one automation session of a server.
type automation struct {
	s *Server

	act sync.Mutex // serialises acts (held across a slow fault's delay)

	mu      sync.Mutex // guards everything below
	gen     int        // Server.st.gen the session belongs to; 0 before the first request
	seq     uint64
	changed chan struct{}
	sess    autoSession
}

// autoSession is what a reset clears.
type autoSession struct {
	signedOn   bool
	operator   string
	screen     string
	path       string // content path a reload loads
	member     string
	httpStatus int
	alert      string
	status     string
	content    int // content frame loads
	nav        int // nav frame loads
	focus      string
	fields     map[string]string // operator, password, member, site-q
	navQuery   string            // the site search shown in nav
}

// sync starts a new session after a reset (and at the first request). It
// reports whether it did. a.mu must be held.
func (a *automation) sync() bool {
	a.s.mu.Lock()
	gen := a.s.st.gen
	a.s.mu.Unlock()
	if gen == a.gen {
		return false
	}
	a.gen = gen
	a.sess = autoSession{
		screen: screenSignon, path: signonPath, httpStatus: http.StatusOK,
		content: 1, nav: 1, fields: map[string]string{},
	}
	a.bump()
	return true
}

// bump records a change and wakes every long poll. a.mu must be held.
func (a *automation) bump() {
	a.seq++
	close(a.changed)
	a.changed = make(chan struct{})
}

// baseURL is the app's URL as the request reached it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// handleState answers GET /_automation/state, holding the request while
// ?after=SEQ&wait_ms=MS waits for a change that has not happened.
func (a *automation) handleState(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if after := q.Get("after"); after != "" {
		seq, err := strconv.ParseUint(after, 10, 64)
		ms, werr := strconv.Atoi(q.Get("wait_ms"))
		if err != nil || werr != nil || ms < 0 {
			writeJSON(w, http.StatusBadRequest, statewire.ErrorResponse{Error: "after and wait_ms must be non-negative integers", Code: "invalid"})
			return
		}
		a.wait(r.Context(), seq, min(time.Duration(ms)*time.Millisecond, automationMaxWait))
	}
	a.mu.Lock()
	a.sync()
	body := a.render(baseURL(r))
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// wait returns when seq differs from after, wait passes or ctx ends.
func (a *automation) wait(ctx context.Context, after uint64, wait time.Duration) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(automationResync)
	defer tick.Stop()
	for {
		a.mu.Lock()
		a.sync()
		seq, ch := a.seq, a.changed
		a.mu.Unlock()
		if seq != after {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// actRefusal is an act the app refuses.
type actRefusal struct {
	status int
	code   string
	msg    string
}

func refuseAct(status int, code, msg string) *actRefusal {
	return &actRefusal{status: status, code: code, msg: msg}
}

// handleAct answers POST /_automation/act.
func (a *automation) handleAct(w http.ResponseWriter, r *http.Request) {
	var req statewire.ActRequest
	if cerr := decodeControl(r, &req); cerr != nil {
		writeJSON(w, http.StatusBadRequest, statewire.ErrorResponse{Error: cerr.Error, Code: "invalid"})
		return
	}
	a.act.Lock()
	defer a.act.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sync()
	before := [2]int{a.sess.content, a.sess.nav}
	ref := a.perform(r.Context(), req)
	if ref != nil {
		writeJSON(w, ref.status, statewire.ErrorResponse{Error: ref.msg, Code: ref.code})
		return
	}
	a.bump()
	ans := statewire.ActResponse{
		Navigated: before != [2]int{a.sess.content, a.sess.nav},
		URL:       baseURL(r) + "/",
		Seq:       a.seq,
	}
	if a.sess.screen == screenBadGateway {
		ans.Error = "the core system did not respond"
		writeJSON(w, http.StatusBadGateway, ans)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

// perform carries out one act. a.mu is held (perform releases it only
// while a slow fault delays a page load).
func (a *automation) perform(ctx context.Context, req statewire.ActRequest) *actRefusal {
	switch req.Action {
	case "navigate":
		u, err := url.Parse(req.URL)
		if err != nil || req.URL == "" {
			return refuseAct(http.StatusBadRequest, "invalid", "navigate needs a valid url")
		}
		path := u.Path
		if path == "" || path == "/" || path == "/nav" {
			path = homePath
		}
		a.reloadNav("")
		a.load(ctx, http.MethodGet, path)
		return nil
	case "reload":
		a.reloadNav("")
		a.load(ctx, http.MethodGet, a.sess.path)
		return nil
	case "click", "type", "select", "press_key":
	default:
		return refuseAct(http.StatusNotImplemented, "unsupported", "action "+strconv.Quote(req.Action)+" is not supported")
	}
	id := req.Control
	if id == "" {
		if req.Action != "press_key" {
			return refuseAct(http.StatusBadRequest, "invalid", req.Action+" needs a control")
		}
		if a.sess.focus == "" {
			return nil // no focused control: the key goes nowhere
		}
		id = a.sess.focus
	}
	c, ok := a.find(id)
	if !ok {
		return refuseAct(http.StatusNotFound, "stale", "no control "+strconv.Quote(clip(id))+" on the current screen")
	}
	if c.Disabled {
		return refuseAct(http.StatusUnprocessableEntity, "disabled", c.Role+" "+strconv.Quote(c.Name)+" is disabled")
	}
	name := controlName(c.ID)
	switch req.Action {
	case "type":
		if c.Role != "textbox" && c.Role != "searchbox" {
			return refuseAct(http.StatusUnprocessableEntity, "invalid", c.Role+" "+strconv.Quote(c.Name)+" is not editable")
		}
		a.sess.fields[name] = clip(req.Text)
		a.sess.focus = c.ID
	case "select":
		return refuseAct(http.StatusUnprocessableEntity, "invalid", c.Role+" "+strconv.Quote(c.Name)+" is not a select")
	case "press_key":
		a.sess.focus = c.ID
		if req.Key == "Enter" {
			a.submit(ctx, name)
		}
	case "click":
		a.sess.focus = c.ID
		a.click(ctx, name)
	}
	return nil
}

// controlName strips the frame-load prefix from an id.
func controlName(id string) string {
	_, name, _ := strings.Cut(id, ".")
	return name
}

// find returns the control of the current screen with the id.
func (a *automation) find(id string) (statewire.Control, bool) {
	for _, c := range a.controls() {
		if c.ID == id {
			return c, true
		}
	}
	return statewire.Control{}, false
}

// click performs a click on the control of the name.
func (a *automation) click(ctx context.Context, name string) {
	switch name {
	case "member-search":
		a.load(ctx, http.MethodGet, searchPath)
	case "history-link":
		a.load(ctx, http.MethodGet, memberPrefix+a.sess.member+historySuffix)
	case "member-details":
		a.load(ctx, http.MethodGet, memberPrefix+a.sess.member)
	case "sign-off":
		a.load(ctx, http.MethodGet, signoffPath)
	case "site-go", "signon", "search":
		a.submit(ctx, name)
	case "clear":
		a.sess.fields["member"] = ""
	case "notice-continue":
		a.load(ctx, http.MethodPost, noticeAckPath)
	}
}

// submit submits the form of the control of the name (Enter in a field, or
// its submit button).
func (a *automation) submit(ctx context.Context, name string) {
	switch name {
	case "operator", "password", "signon":
		a.load(ctx, http.MethodPost, signonPath)
	case "member", "search":
		a.load(ctx, http.MethodPost, searchPath)
	case "site-q", "site-go":
		a.s.countRequest(http.MethodGet, "/nav")
		a.reloadNav(a.sess.fields["site-q"])
	}
}

// reloadNav loads the nav frame, showing the site search for query.
func (a *automation) reloadNav(query string) {
	a.sess.nav++
	a.sess.navQuery = clip(query)
	a.sess.fields["site-q"] = a.sess.navQuery
	if strings.HasPrefix(a.sess.focus, "n") {
		a.sess.focus = ""
	}
}

// maxRedirects bounds the redirects one page load follows.
const maxRedirects = 5

// load performs a content request and the redirects it answers, each
// through the content faults and the session gate, as a browser's frame
// would; the content frame then shows the last answer. A path outside
// /content/ shows the missing page.
func (a *automation) load(ctx context.Context, method, path string) {
	back := a.sess.path
	for range maxRedirects {
		a.s.countRequest(method, path)
		if !strings.HasPrefix(path, contentPrefix) {
			// Only content pages are faulted and gated.
			a.showGet(screenMissing, path, http.StatusNotFound)
			return
		}
		if a.s.fire(FaultSlow) {
			a.mu.Unlock()
			ok := sleepContext(ctx, slowDelay)
			a.mu.Lock()
			if !ok || a.sync() {
				return // the client left, or a reset started a new session
			}
		}
		if a.s.fire(FaultTransientLoad) {
			reload := path
			if method == http.MethodPost {
				reload = formPath(path, back)
			}
			a.show(screenBadGateway, reload, http.StatusBadGateway)
			return
		}
		if a.sess.signedOn && a.s.fire(FaultSessionTimeout) {
			a.sess.signedOn, a.sess.operator = false, ""
			method, path = http.MethodGet, signonPath
			continue
		}
		if !a.sess.signedOn && !publicContent(path) {
			method, path = http.MethodGet, signonPath
			continue
		}
		next := a.serve(method, path, back)
		if next == "" {
			return
		}
		method, path = http.MethodGet, next
	}
}

// formPath is the page holding the form a POST to path came from.
func formPath(path, back string) string {
	switch path {
	case signonPath, searchPath:
		return path
	}
	return back
}

// show puts a new page in the content frame.
func (a *automation) show(screen, path string, status int) {
	a.sess.content++
	a.sess.screen, a.sess.path, a.sess.httpStatus = screen, path, status
	a.sess.alert, a.sess.status, a.sess.member = "", "", ""
	if strings.HasPrefix(a.sess.focus, "c") {
		a.sess.focus = ""
	}
}

// serve answers one gated content request like the HTML handlers do and
// returns the path it redirects to ("" when it shows a page).
func (a *automation) serve(method, path, back string) string {
	f := a.sess.fields
	switch {
	case path == signonPath && method == http.MethodGet:
		a.showGet(screenSignon, signonPath, http.StatusOK)
		f["operator"], f["password"] = "", ""
	case path == signonPath:
		if a.swallowed(screenSignon, signonPath) {
			f["operator"], f["password"] = "", ""
			return ""
		}
		operator := f["operator"]
		ok := a.s.validCredentials(operator, f["password"])
		f["operator"], f["password"] = "", ""
		if !ok {
			a.s.logger.Info("sign on refused")
			a.show(screenSignon, signonPath, http.StatusOK)
			a.sess.alert = "Invalid operator ID or password"
			return ""
		}
		a.sess.signedOn, a.sess.operator = true, operator
		a.s.logger.Info("signed on", "operator", operator, "mode", "automation")
		return homePath
	case path == homePath && method == http.MethodGet:
		a.showGet(screenHome, homePath, http.StatusOK)
	case path == signoffPath && method == http.MethodGet:
		a.sess.signedOn, a.sess.operator = false, ""
		return signonPath
	case path == searchPath && method == http.MethodGet:
		a.showGet(screenSearch, searchPath, http.StatusOK)
		f["member"] = ""
	case path == searchPath:
		number := f["member"]
		if a.swallowed(screenSearch, searchPath) {
			return ""
		}
		if !isMemberNumber(number) {
			a.show(screenSearch, searchPath, http.StatusBadRequest)
			a.sess.alert = "Member number must be 5 digits"
			return ""
		}
		if _, ok := members[number]; !ok {
			a.show(screenSearch, searchPath, http.StatusOK)
			a.sess.status = "Member not found"
			return ""
		}
		return memberPrefix + number
	case strings.HasPrefix(path, memberPrefix) && method == http.MethodGet:
		number, history := strings.CutSuffix(strings.TrimPrefix(path, memberPrefix), historySuffix)
		m, ok := members[number]
		switch {
		case !isMemberNumber(number):
			a.showGet(screenInvalid, path, http.StatusBadRequest)
		case !ok:
			a.showGet(screenNotFound, path, http.StatusNotFound)
		case m.Restricted:
			a.showGet(screenRestricted, path, http.StatusOK)
		case history:
			a.showGet(screenHistory, path, http.StatusOK)
		default:
			a.showGet(screenMember, path, http.StatusOK)
		}
		if ok {
			a.sess.member = number
		}
	case path == noticeAckPath && method == http.MethodPost:
		a.s.ackNotice()
		a.s.logger.Info("notice acknowledged", "mode", "automation")
		return safeNext(back)
	default:
		a.showGet(screenMissing, path, http.StatusNotFound)
	}
	return ""
}

// showGet shows a page loaded by GET: a pending notice, or an armed
// undeclared_dialog, puts the notice on it.
func (a *automation) showGet(screen, path string, status int) {
	a.show(screen, path, status)
	a.s.noticeOnGet()
}

// swallowed applies the form-post prelude: a pending notice swallows the
// post (the form shows again), an armed validation_error rejects it (422
// and the alert). It reports whether the post ends here.
func (a *automation) swallowed(screen, path string) bool {
	if a.s.noticePending() {
		a.show(screen, path, http.StatusOK)
		return true
	}
	if a.s.fire(FaultValidationError) {
		a.show(screen, path, http.StatusUnprocessableEntity)
		a.sess.alert = validationErrorText
		return true
	}
	return false
}

// controls returns the current screen's controls. a.mu must be held.
func (a *automation) controls() []statewire.Control {
	v := a.s.currentVariant()
	var out []statewire.Control
	nav := "n" + strconv.Itoa(a.sess.nav) + "."
	content := "c" + strconv.Itoa(a.sess.content) + "."
	add := func(prefix string, c statewire.Control) {
		c.ID = prefix + c.ID
		if c.Parent != "" {
			c.Parent = prefix + c.Parent
		}
		c.Focused = c.ID == a.sess.focus
		if prefix == nav {
			c.Frame = "nav"
		} else {
			c.Frame = "content"
		}
		out = append(out, c)
	}
	f := a.sess.fields
	add(nav, statewire.Control{ID: "member-search", Role: "link", Name: "Member Search"})
	add(nav, statewire.Control{ID: "sign-off", Role: "link", Name: "Sign Off"})
	add(nav, statewire.Control{ID: "site-q", Role: "searchbox", Name: "Search this site", Value: f["site-q"]})
	add(nav, statewire.Control{ID: "site-go", Role: "button", Name: "Search"})
	if a.sess.navQuery != "" {
		add(nav, statewire.Control{ID: "site-results", Role: "text", Name: "No site pages match " + a.sess.navQuery + "."})
	}
	text := func(id, role, name string) { add(content, statewire.Control{ID: id, Role: role, Name: name}) }
	heading := func(name string) { text("heading", "heading", name) }
	alert := func() {
		if a.sess.alert != "" {
			text("alert", "alert", a.sess.alert)
		}
	}
	switch a.sess.screen {
	case screenSignon:
		heading("Sign On")
		alert()
		add(content, statewire.Control{ID: "operator", Role: "textbox", Name: "Operator ID", Value: f["operator"]})
		add(content, statewire.Control{ID: "password", Role: "textbox", Name: "Password", Password: true,
			Value: strings.Repeat("•", min(utf8.RuneCountInString(f["password"]), maxEcho))})
		add(content, statewire.Control{ID: "signon", Role: "button", Name: "Sign on"})
	case screenHome:
		heading("Welcome")
		text("signed-on", "text", "Signed on as "+a.sess.operator)
	case screenSearch:
		heading("Member Search")
		alert()
		if a.sess.status != "" {
			text("status", "status", a.sess.status)
		}
		add(content, statewire.Control{ID: "member", Role: "textbox", Name: "Member number", Value: f["member"]})
		add(content, statewire.Control{ID: "search", Role: "button", Name: v.SearchButton()})
		add(content, statewire.Control{ID: "clear", Role: "button", Name: "Clear"})
	case screenMember:
		heading("Member Details")
		text("member-heading", "heading", "Member "+a.sess.member)
		m := members[a.sess.member]
		for i, r := range memberRows(m, v) {
			row := "row" + strconv.Itoa(i)
			add(content, statewire.Control{ID: row, Role: "row", Region: r.Label})
			add(content, statewire.Control{ID: row + ".label", Role: "cell", Name: r.Label, Region: r.Label, Parent: row})
			add(content, statewire.Control{ID: row + ".value", Role: "cell", Name: r.Value, Region: r.Label, Parent: row})
		}
		if !m.HasSavings {
			text("no-savings", "status", "No savings account on file")
		}
		add(content, statewire.Control{ID: "history-link", Role: "link", Name: "Transfer history"})
	case screenHistory:
		heading("Transfer History")
		text("member-heading", "heading", "Member "+a.sess.member)
		for _, c := range a.historyControls() {
			add(content, c)
		}
		add(content, statewire.Control{ID: "member-details", Role: "link", Name: "Member details"})
	case screenRestricted:
		heading("Restricted Record")
		text("message", "status", "This record is restricted. Refer to a supervisor.")
	case screenNotFound:
		heading("Member Not Found")
		text("message", "status", "Member not found")
	case screenInvalid:
		heading("Invalid Member Number")
		text("message", "alert", "Invalid member number")
	case screenBadGateway:
		heading("Bad Gateway")
		text("message", "text", "The core system did not respond.")
	default:
		heading("Not Found")
		text("message", "text", "404 not found: no page at "+clip(a.sess.path))
	}
	if a.s.noticePending() {
		add(content, statewire.Control{ID: "notice", Role: "dialog", Name: "Notice"})
		add(content, statewire.Control{ID: "notice-text", Role: "text", Name: noticeText, Parent: "notice"})
		add(content, statewire.Control{ID: "notice-continue", Role: "button", Name: "Continue", Parent: "notice"})
	}
	return out
}

// render returns the state body. a.mu must be held.
func (a *automation) render(base string) statewire.State {
	return statewire.State{
		URL:        base + "/",
		Title:      "MemberDesk",
		HTTPStatus: a.sess.httpStatus,
		Controls:   a.controls(),
		AppState: statewire.MustAppState(map[string]any{
			"screen":      a.sess.screen,
			"path":        a.sess.path,
			"signed_on":   a.sess.signedOn,
			"member":      a.sess.member,
			"http_status": a.sess.httpStatus,
			"notice":      a.s.noticePending(),
			"variant":     a.s.currentVariant().Name,
		}),
		Seq: a.seq,
	}
}
