package mockapp

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// The task-shape pages: the shapes real back-office tasks take beyond a
// lookup and a transfer (issue 24), each reached from a navigation link.
//
//	GET  /content/checklist          heading "Document Checklist"; textbox "Member number", button
//	                                 "Open checklist"
//	POST /content/checklist          member: 303 /content/member/{id}/checklist; invalid: 400 alert
//	GET  /content/member/{id}/checklist  heading "Document Checklist", heading "Member {id}", status
//	                                 ("Saved: N items" right after a save, else "On file: N items" or
//	                                 "Nothing saved yet"), group "Documents received" of checkboxes
//	                                 named by document (checked: the saved set), button "Save
//	                                 checklist", heading "Saved documents" and list "Saved documents"
//	                                 (or "No documents saved"). On the third, sixth, … opening in a
//	                                 session the page is the important notice instead (see below)
//	POST /content/member/{id}/checklist  item (repeated): saves exactly the ticked documents, 303
//	                                 back with ?saved=1; an unknown document: 400 alert naming it
//	GET  /content/approvals          heading "Pending Approvals"; table "Pending approvals" (columns
//	                                 "Item", "Amount", "Action"; a button "Approve" in each row) or
//	                                 "No items pending"; heading "Approved" and table "Approved"
//	                                 (columns "Item", "Amount", "Reference") or "Nothing approved
//	                                 yet"; after an approval, status "Approved: ITEM (APV-NNNN)"
//	POST /content/approvals/approve  id: moves the row to Approved under a new reference, 303
//	                                 /content/approvals?approved=ID; a row not pending: 409 alert
//	                                 "This item is not pending" and nothing changes
//	GET  /content/branch             heading "Home Branch"; textbox "Member number", textbox "Branch
//	                                 code", button "Save branch"; text listing the branch codes
//	POST /content/branch             member, branch: 303 /content/member/{id}/branch?saved=1; a
//	                                 branch code with a lower-case letter: 400 alert "Branch code
//	                                 must be upper case" (nothing saved); other refusals name the field
//	GET  /content/member/{id}/branch heading "Home Branch", heading "Member {id}", rows "Home branch"
//	                                 (code or "None") and "Branch name"; status "Home branch saved"
//	                                 right after a save; link "Change home branch"
//	POST /content/notice/important   the important notice's "Acknowledge": 303 back to next
//
// The important notice: each signed-on session counts its openings of a
// Document Checklist page (GET /content/member/{id}/checklist; the page a
// save redirects to does not count). The third, sixth, ninth … opening
// shows, instead of the checklist, a page with heading "Important notice",
// its text and a button "Acknowledge"; it shows on every opening until
// acknowledged, and the opening the acknowledgement returns to is the same
// visit (not counted). A fresh sign-on starts a fresh count; so does a
// reset. The rule is a counter, not a clock or a random draw, so tests
// know which run meets it.

// Paths of the task-shape pages; memberPrefix + id + a suffix is a
// member's page.
const (
	checklistPath    = "/content/checklist"
	checklistSuffix  = "/checklist"
	approvalsPath    = "/content/approvals"
	approvePath      = "/content/approvals/approve"
	branchPath       = "/content/branch"
	branchSuffix     = "/branch"
	importantAckPath = "/content/notice/important"
)

// importantEvery is how often (in checklist openings) the important
// notice shows.
const importantEvery = 3

// importantText is the important notice's text.
const importantText = "Check each identity document against the original before you tick it."

// shapeNavLinks are the navigation links of the task-shape pages, shown
// before "Sign Off".
var shapeNavLinks = []link{
	{"Document Checklist", checklistPath},
	{"Pending Approvals", approvalsPath},
	{"Home Branch", branchPath},
}

// allNavLinks are the Navigation frame's links in order: the lookup's,
// the task shapes', then "Sign Off".
func allNavLinks() []link {
	out := slices.Clone(navLinks[:len(navLinks)-1])
	out = append(out, shapeNavLinks...)
	return append(out, navLinks[len(navLinks)-1])
}

// branches maps a branch code to its name.
var branches = map[string]string{"DTN": "Downtown", "NTH": "North", "WST": "West"}

// branchCodes is the branch list the form shows.
const branchCodes = "Branch codes: DTN (Downtown), NTH (North), WST (West)"

func (s *Server) shapeRoutes(mux *http.ServeMux) {
	handle(mux, checklistPath, methods{http.MethodGet: s.handleChecklistPick, http.MethodPost: s.handleChecklistOpen})
	handle(mux, memberPrefix+"{id}"+checklistSuffix, methods{http.MethodGet: s.handleChecklist, http.MethodPost: s.handleChecklistSave})
	handle(mux, approvalsPath, methods{http.MethodGet: s.handleApprovals})
	handle(mux, approvePath, methods{http.MethodPost: s.handleApprove})
	handle(mux, branchPath, methods{http.MethodGet: s.handleBranchForm, http.MethodPost: s.handleBranchSave})
	handle(mux, memberPrefix+"{id}"+branchSuffix, methods{http.MethodGet: s.handleBranch})
	handle(mux, importantAckPath, methods{http.MethodPost: s.handleImportantAck})
	handle(mux, RouteShapes, methods{http.MethodGet: s.handleShapeDriftState, http.MethodPost: s.handleShapeDrift})
}

// checkItem is one checkbox of a checklist.
type checkItem struct {
	Name    string
	Checked bool
}

// checklistData feeds the checklist picker (Number empty) and a member's
// checklist.
type checklistData struct {
	Member string // the picker's echoed member number
	Number string
	Status string
	Items  []checkItem
	Saved  []string
}

func checklistPickPage(member string) page {
	return page{tmpl: tmplChecklist, title: "Document Checklist", data: checklistData{Member: clip(member)}, back: checklistPath}
}

func (s *Server) handleChecklistPick(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, checklistPickPage(""))
}

func (s *Server) handleChecklistOpen(w http.ResponseWriter, r *http.Request) {
	number := r.PostFormValue("member")
	form := checklistPickPage(number)
	if !s.formPrelude(w, r, form) {
		return
	}
	if !isMemberNumber(number) {
		form.status, form.alert = http.StatusBadRequest, "Member number must be 5 digits"
		s.render(w, r, form)
		return
	}
	http.Redirect(w, r, memberPrefix+number+checklistSuffix, http.StatusSeeOther)
}

// plural renders "N item(s)".
func plural(n int) string {
	if n == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}

// checklistPage is number's checklist as saved, with the documents the
// shape drift in force shows.
func (s *Server) checklistPage(number string, justSaved bool) page {
	saved, ok := s.savedChecklist(number)
	d := checklistData{Number: number, Saved: saved, Status: "Nothing saved yet"}
	switch {
	case justSaved:
		d.Status = "Saved: " + plural(len(saved))
	case ok:
		d.Status = "On file: " + plural(len(saved))
	}
	for _, name := range checklistItems(s.shapeDrift()) {
		d.Items = append(d.Items, checkItem{Name: name, Checked: slices.Contains(saved, name)})
	}
	return page{tmpl: tmplChecklist, title: "Document Checklist", data: d}
}

func (s *Server) handleChecklist(w http.ResponseWriter, r *http.Request) {
	number := r.PathValue("id")
	if _, ok := s.memberGate(w, r, number); !ok {
		return
	}
	sess, ok := signedOn(w, r)
	if !ok {
		return
	}
	justSaved := r.URL.Query().Get("saved") == "1"
	if !justSaved && s.checklistOpened(sess.ID) {
		s.logger.Info("important notice shown", "member", number)
		s.render(w, r, page{tmpl: tmplImportant, title: "Important notice", data: importantText})
		return
	}
	s.render(w, r, s.checklistPage(number, justSaved))
}

func (s *Server) handleChecklistSave(w http.ResponseWriter, r *http.Request) {
	number := r.PathValue("id")
	if _, ok := s.memberGate(w, r, number); !ok {
		return
	}
	form := s.checklistPage(number, false)
	form.back = r.URL.Path
	if !s.formPrelude(w, r, form) {
		return
	}
	if err := r.ParseForm(); err != nil {
		form.status, form.alert = http.StatusBadRequest, "item: the form could not be read"
		s.render(w, r, form)
		return
	}
	known := checklistItems(s.shapeDrift())
	ticked := r.PostForm["item"]
	for _, name := range ticked {
		if !slices.Contains(known, name) {
			form.status, form.alert = http.StatusBadRequest, fmt.Sprintf("item: unknown document %q", clip(name))
			s.render(w, r, form)
			return
		}
	}
	var saved []string // in page order, each once
	for _, name := range known {
		if slices.Contains(ticked, name) {
			saved = append(saved, name)
		}
	}
	s.saveChecklist(number, saved)
	s.logger.Info("checklist saved", "member", number, "items", len(saved))
	http.Redirect(w, r, memberPrefix+number+checklistSuffix+"?saved=1", http.StatusSeeOther)
}

func (s *Server) handleImportantAck(w http.ResponseWriter, r *http.Request) {
	sess, ok := signedOn(w, r)
	if !ok {
		return
	}
	if s.ackImportant(sess.ID) {
		s.logger.Info("important notice acknowledged")
	}
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// approvalView is one row of an approvals table.
type approvalView struct {
	ID, Item, Amount, Reference string
}

// approvalsData feeds the Pending Approvals page.
type approvalsData struct {
	Status   string
	Pending  []approvalView
	Approved []approvalView
}

// approvalsPage is the queue; approved, when it names an approved row,
// adds the status that reports it.
func (s *Server) approvalsPage(approved string) page {
	var d approvalsData
	for _, a := range s.approvalQueue() {
		v := approvalView{ID: a.ID, Item: a.Item, Amount: formatMoney(a.Cents), Reference: a.Reference}
		if a.Reference == "" {
			d.Pending = append(d.Pending, v)
			continue
		}
		d.Approved = append(d.Approved, v)
		if a.ID == approved {
			d.Status = fmt.Sprintf("Approved: %s (%s)", a.Item, a.Reference)
		}
	}
	return page{tmpl: tmplApprovals, title: "Pending Approvals", data: d, back: approvalsPath}
}

func (s *Server) handleApprovals(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, s.approvalsPage(r.URL.Query().Get("approved")))
}

func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) {
	sess, ok := signedOn(w, r)
	if !ok {
		return
	}
	form := s.approvalsPage("")
	if !s.formPrelude(w, r, form) {
		return
	}
	id := r.PostFormValue("id")
	a, ok := s.approve(id, sess.Operator)
	if !ok {
		form.status, form.alert = http.StatusConflict, "This item is not pending"
		s.render(w, r, form)
		return
	}
	s.logger.Info("approved", "id", a.ID, "reference", a.Reference)
	http.Redirect(w, r, approvalsPath+"?approved="+a.ID, http.StatusSeeOther)
}

// branchData feeds the Home Branch form (Number empty) and a member's
// home branch.
type branchData struct {
	Member, Branch string // the form's echoed values
	Codes          string
	Number         string
	Status         string
	Code, Name     string
}

func branchFormPage(member, branch string) page {
	return page{tmpl: tmplBranch, title: "Home Branch", data: branchData{Member: clip(member), Branch: clip(branch), Codes: branchCodes}, back: branchPath}
}

func (s *Server) handleBranchForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, branchFormPage("", ""))
}

// threeLetters is the form of a branch code.
var threeLetters = regexp.MustCompile(`^[A-Z]{3}$`)

// branchRefusal says why (member, code) cannot be saved, naming the
// field, with the HTTP status; "" when it can.
func branchRefusal(member, code string) (string, int) {
	m, known := members[member]
	switch {
	case !isMemberNumber(member):
		return "Member number must be 5 digits", http.StatusBadRequest
	case !known:
		return "Member not found", http.StatusNotFound
	case m.Restricted:
		return "This record is restricted. Refer to a supervisor.", http.StatusForbidden
	case code == "":
		return "Branch code is required", http.StatusBadRequest
	case strings.ToUpper(code) != code:
		return "Branch code must be upper case", http.StatusBadRequest
	case !threeLetters.MatchString(code):
		return "Branch code must be 3 letters", http.StatusBadRequest
	case branches[code] == "":
		return "Unknown branch code " + code, http.StatusBadRequest
	}
	return "", 0
}

func (s *Server) handleBranchSave(w http.ResponseWriter, r *http.Request) {
	member, code := r.PostFormValue("member"), r.PostFormValue("branch")
	form := branchFormPage(member, code)
	if !s.formPrelude(w, r, form) {
		return
	}
	if msg, status := branchRefusal(member, code); msg != "" {
		form.status, form.alert = status, msg
		s.render(w, r, form)
		return
	}
	s.setHomeBranch(member, code)
	s.logger.Info("home branch saved", "member", member, "branch", code)
	http.Redirect(w, r, memberPrefix+member+branchSuffix+"?saved=1", http.StatusSeeOther)
}

func (s *Server) handleBranch(w http.ResponseWriter, r *http.Request) {
	number := r.PathValue("id")
	if _, ok := s.memberGate(w, r, number); !ok {
		return
	}
	d := branchData{Number: number, Code: "None", Name: "None"}
	if code := s.homeBranch(number); code != "" {
		d.Code, d.Name = code, branches[code]
	}
	if r.URL.Query().Get("saved") == "1" {
		d.Status = "Home branch saved"
	}
	s.render(w, r, page{tmpl: tmplBranch, title: "Home Branch", data: d})
}
