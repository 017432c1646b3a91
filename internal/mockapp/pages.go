package mockapp

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// maxEcho bounds how much of a user's input a page echoes back.
const maxEcho = 64

// link is a navigation link.
type link struct {
	Text string
	Href string
}

// navLinks are the reference lookup's links of the Navigation frame, the
// ones a drift variant renders; the frame also shows shapeNavLinks before
// "Sign Off" (allNavLinks). They target "content".
var navLinks = []link{
	{"Member Search", searchPath},
	{"Open Sub-Account", subaccountPath},
	{"Transfer Funds", transferPath},
	{"Sign Off", signoffPath},
}

func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, page{tmpl: tmplRoot, title: "MemberDesk"})
}

// navData feeds the Navigation frame; Query is the decoy site search.
type navData struct {
	Query string
	Links []link
}

func (s *Server) handleNav(w http.ResponseWriter, r *http.Request) {
	q := clip(r.URL.Query().Get("q"))
	s.render(w, r, page{tmpl: tmplNav, title: "Navigation", data: navData{Query: q, Links: allNavLinks()}})
}

// signonPage is the sign-on form. It never echoes what was typed: a
// password typed into the wrong field must not come back either.
func signonPage() page {
	return page{tmpl: tmplSignon, title: "Sign On", back: signonPath}
}

func (s *Server) handleSignonForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, signonPage())
}

func (s *Server) handleSignon(w http.ResponseWriter, r *http.Request) {
	form := signonPage()
	if !s.formPrelude(w, r, form) {
		return
	}
	operator := r.PostFormValue("operator")
	if !s.validCredentials(operator, r.PostFormValue("password")) {
		s.logger.Info("sign on refused")
		form.alert = "Invalid operator ID or password"
		s.render(w, r, form)
		return
	}
	if old, ok := s.requestSession(r); ok {
		s.dropSession(old.ID)
	}
	id := s.newSession(operator)
	s.markDropAfterSignon(id)
	setSessionCookie(w, id)
	s.logger.Info("signed on", "operator", operator)
	http.Redirect(w, r, homePath, http.StatusSeeOther)
}

func (s *Server) validCredentials(operator, password string) bool {
	okOp := subtle.ConstantTimeCompare([]byte(operator), []byte(s.opts.Operator))
	okPw := subtle.ConstantTimeCompare([]byte(password), []byte(s.opts.Password))
	return okOp&okPw == 1
}

// signedOn returns the request's session; the gate has already redirected
// requests without one, so a miss means it was dropped since.
func signedOn(w http.ResponseWriter, r *http.Request) (session, bool) {
	sess, ok := sessionFrom(r.Context())
	if !ok {
		http.Redirect(w, r, signonPath, http.StatusSeeOther)
	}
	return sess, ok
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	sess, ok := signedOn(w, r)
	if !ok {
		return
	}
	s.render(w, r, messagePage(http.StatusOK, "Welcome", messageData{
		Heading: "Welcome",
		Text:    "Signed on as " + sess.Operator,
	}))
}

func (s *Server) handleSignoff(w http.ResponseWriter, r *http.Request) {
	if sess, ok := sessionFrom(r.Context()); ok {
		s.dropSession(sess.ID)
	}
	expireSessionCookie(w)
	http.Redirect(w, r, signonPath, http.StatusSeeOther)
}

// searchData feeds the member search form.
type searchData struct {
	Member string
	Status string // role="status" message
}

func searchPage(d searchData) page {
	d.Member = clip(d.Member)
	return page{tmpl: tmplSearch, title: "Member Search", data: d, back: searchPath}
}

func (s *Server) handleSearchForm(w http.ResponseWriter, r *http.Request) {
	p := searchPage(searchData{})
	p.focusSteal = s.fire(FaultFocusSteal)
	s.render(w, r, p)
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	number := r.PostFormValue("member")
	form := searchPage(searchData{Member: number})
	if !s.formPrelude(w, r, form) {
		return
	}
	if !isMemberNumber(number) {
		form.status = http.StatusBadRequest
		form.alert = "Member number must be 5 digits"
		s.render(w, r, form)
		return
	}
	if _, ok := members[number]; !ok {
		s.render(w, r, searchPage(searchData{Member: number, Status: "Member not found"}))
		return
	}
	http.Redirect(w, r, memberPrefix+number, http.StatusSeeOther)
}

// memberData feeds the member details page.
type memberData struct {
	// Number is shown as the heading "Member NNNNN" under "Member
	// Details" on every variant, so a capability can check that the record
	// on screen is the one it asked for.
	Number    string
	Rows      []row
	NoSavings bool
}

func newMemberData(m member, v variant) memberData {
	return memberData{Number: m.Number, Rows: memberRows(m, v), NoSavings: !m.HasSavings}
}

func (s *Server) handleMember(w http.ResponseWriter, r *http.Request) {
	number := r.PathValue("id")
	m, ok := s.memberGate(w, r, number)
	if !ok {
		return
	}
	v := s.currentVariant()
	stale := s.fire(FaultStaleResult)
	p := page{tmpl: tmplMember, title: "Member Details", data: newMemberData(m, v), v: v}
	if stale {
		p.fresh, p.data = p.data, newMemberData(s.staleFor(number), v)
	} else {
		s.setLastMember(number)
	}
	s.render(w, r, p)
}

func (s *Server) handleNoticeAck(w http.ResponseWriter, r *http.Request) {
	s.ackNotice()
	s.logger.Info("notice acknowledged")
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// safeNext returns next when it is a clean same-site content path, else the
// home page, so the notice form cannot redirect off the app.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" ||
		!strings.HasPrefix(u.Path, contentPrefix) || path.Clean(u.Path) != u.Path || u.Path != next {
		return homePath
	}
	return next
}

// clip bounds an echoed user input to maxEcho bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
