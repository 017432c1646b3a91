package mockapp

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

// Template names. Content pages share templates/layout.html (which adds the
// footer and, when due, the notice dialog); the frame pages stand alone.
const (
	tmplRoot       = "root"
	tmplNav        = "nav"
	tmplSignon     = "signon"
	tmplSearch     = "search"
	tmplMember     = "member"
	tmplMessage    = "message"
	tmplSubaccount = "subaccount"
	tmplTransfer   = "transfer"
	tmplReview     = "review"
	tmplHistory    = "history"
	// The task-shape pages (shapes.go).
	tmplChecklist = "checklist"
	tmplApprovals = "approvals"
	tmplBranch    = "branch"
	tmplImportant = "important"
)

// templates maps a template name to its parsed set. Each set executes "page".
var templates = parseTemplates()

func parseTemplates() map[string]*template.Template {
	out := make(map[string]*template.Template)
	for _, name := range []string{tmplRoot, tmplNav} {
		out[name] = template.Must(template.ParseFS(templateFS, "templates/"+name+".html"))
	}
	layout := template.Must(template.ParseFS(templateFS, "templates/layout.html"))
	for _, name := range []string{tmplSignon, tmplSearch, tmplMember, tmplMessage, tmplSubaccount, tmplTransfer, tmplReview, tmplHistory,
		tmplChecklist, tmplApprovals, tmplBranch, tmplImportant} {
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html"))
	}
	return out
}

// page describes one HTML response.
type page struct {
	tmpl   string
	title  string
	status int     // 0 means 200
	data   any     // the template's .Data
	alert  string  // a role="alert" message shown under the heading
	notice bool    // show the notice dialog whatever the method
	back   string  // where the notice's Continue returns; default the request path
	v      variant // zero means the server's current variant
	// Fault markup (faults.go): the Survey dialog, the focus-stealing
	// popup's script, and the requested record that replaces a stale one
	// (data then holds the stale record).
	survey     bool
	focusSteal bool
	fresh      any
}

// view is what every template executes against.
type view struct {
	Title  string
	V      variant
	Alert  string
	Notice bool
	Next   string // hidden "next" field of the notice form
	Data   any

	Survey     bool
	FocusSteal bool
	Fresh      *view // the record a stale page swaps in after StaleMS
	StaleMS    int64
}

// render writes p. A content GET page also shows the notice dialog when one
// is pending or undeclared_dialog fires now.
func (s *Server) render(w http.ResponseWriter, r *http.Request, p page) {
	if p.v.Name == "" {
		p.v = s.currentVariant()
	}
	notice := p.notice
	if !notice && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, contentPrefix) {
		notice = s.noticeOnGet()
	}
	faultUI := p.survey || p.focusSteal || p.fresh != nil
	if !notice && !faultUI && s.renderDrift(w, r, p) {
		return
	}
	next := p.back
	if next == "" {
		next = r.URL.Path
	}
	vw := view{
		Title:      p.title,
		V:          p.v,
		Alert:      p.alert,
		Notice:     notice,
		Next:       next,
		Data:       p.data,
		Survey:     p.survey,
		FocusSteal: p.focusSteal,
		StaleMS:    staleDelay.Milliseconds(),
	}
	if p.fresh != nil {
		vw.Fresh = &view{Title: p.title, V: p.v, Data: p.fresh}
	}
	var buf bytes.Buffer
	err := templates[p.tmpl].ExecuteTemplate(&buf, "page", vw)
	if err != nil {
		s.logger.Error("render page", "template", p.tmpl, "err", err)
		http.Error(w, "500 internal error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	status := p.status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// messageData is a heading, one paragraph and optional summary rows: the
// shape of every result and error page.
type messageData struct {
	Heading string
	Text    string
	Role    string // role of the paragraph: "", "status" or "alert"
	Rows    []row
}

func messagePage(status int, title string, d messageData) page {
	return page{tmpl: tmplMessage, title: title, status: status, data: d}
}
