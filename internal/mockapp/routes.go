package mockapp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Routes. Everything under contentPrefix is faultable and, except the
// public paths, needs a session.
const (
	controlPrefix  = "/_control/"
	contentPrefix  = "/content/"
	signonPath     = "/content/signon"
	homePath       = "/content/home"
	signoffPath    = "/content/signoff"
	searchPath     = "/content/search"
	memberPrefix   = "/content/member/"
	historySuffix  = "/history" // memberPrefix + id + historySuffix: the transfer history
	subaccountPath = "/content/subaccount"
	transferPath   = "/content/transfer"
	reviewPath     = "/content/transfer/review"
	submitPath     = "/content/transfer/submit"
	noticeAckPath  = "/content/notice/ack"
)

// maxBodyBytes bounds every request body (forms and control JSON).
const maxBodyBytes = 64 << 10

// methods maps an HTTP method to its handler for one path.
type methods map[string]http.HandlerFunc

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	handle(mux, "/{$}", methods{http.MethodGet: s.handleRoot})
	handle(mux, "/nav", methods{http.MethodGet: s.handleNav})
	handle(mux, signonPath, methods{http.MethodGet: s.handleSignonForm, http.MethodPost: s.handleSignon})
	handle(mux, homePath, methods{http.MethodGet: s.handleHome})
	handle(mux, signoffPath, methods{http.MethodGet: s.handleSignoff})
	handle(mux, searchPath, methods{http.MethodGet: s.handleSearchForm, http.MethodPost: s.handleSearch})
	handle(mux, memberPrefix+"{id}", methods{http.MethodGet: s.handleMember})
	handle(mux, memberPrefix+"{id}/history", methods{http.MethodGet: s.handleHistory})
	handle(mux, subaccountPath, methods{http.MethodGet: s.handleSubaccountForm, http.MethodPost: s.handleSubaccount})
	handle(mux, transferPath, methods{http.MethodGet: s.handleTransferForm})
	handle(mux, reviewPath, methods{http.MethodPost: s.handleReview})
	handle(mux, submitPath, methods{http.MethodPost: s.handleSubmit})
	handle(mux, noticeAckPath, methods{http.MethodPost: s.handleNoticeAck})
	handle(mux, controlPrefix+"arm", methods{http.MethodPost: s.handleArm})
	handle(mux, controlPrefix+"variant", methods{http.MethodPost: s.handleVariant})
	handle(mux, controlPrefix+"reset", methods{http.MethodPost: s.handleReset})
	handle(mux, controlPrefix+"state", methods{http.MethodGet: s.handleState})
	handle(mux, controlPrefix+"ledger", methods{http.MethodGet: s.handleLedger})
	s.driftRoutes(mux)
	s.shapeRoutes(mux)      // shapes.go
	s.automationRoutes(mux) // statecontract.go
	mux.HandleFunc("/", notFound)
	return mux
}

// handle registers "METHOD path" for each method, and path alone to answer
// every other method 405 with an Allow header (GET implies HEAD).
func handle(mux *http.ServeMux, path string, m methods) {
	allowed := make([]string, 0, len(m)+1)
	for method, h := range m {
		mux.HandleFunc(method+" "+path, limitBody(h))
		allowed = append(allowed, method)
		if method == http.MethodGet {
			allowed = append(allowed, http.MethodHead)
		}
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		msg := fmt.Sprintf("405 method not allowed: %s %s (allowed: %s)", r.Method, r.URL.Path, allow)
		if strings.HasPrefix(r.URL.Path, controlPrefix) {
			writeJSON(w, http.StatusMethodNotAllowed, controlError{Error: msg})
			return
		}
		http.Error(w, msg, http.StatusMethodNotAllowed)
	})
}

func limitBody(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		h(w, r)
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("404 not found: no page at %s", r.URL.Path)
	if strings.HasPrefix(r.URL.Path, controlPrefix) {
		writeJSON(w, http.StatusNotFound, controlError{Error: msg})
		return
	}
	http.Error(w, msg, http.StatusNotFound)
}
