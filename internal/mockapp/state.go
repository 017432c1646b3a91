package mockapp

import (
	"fmt"
	"net/http"
	"strings"
)

// LedgerEntry is one business mutation the app has committed, as listed by
// GET /_control/ledger. Amounts are plain decimal strings ("100.00").
type LedgerEntry struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"` // "transfer" or "subaccount_opened"
	// Date is the business date the entry was written on ("11/30/2026":
	// fixture data, never a clock reading).
	Date           string `json:"date"`
	Confirmation   string `json:"confirmation"`
	Member         string `json:"member"`
	Operator       string `json:"operator"`
	From           string `json:"from,omitempty"`
	To             string `json:"to,omitempty"`
	Amount         string `json:"amount,omitempty"`
	AccountType    string `json:"account_type,omitempty"`
	InitialDeposit string `json:"initial_deposit,omitempty"`
}

// State is the control view of the server, as returned by GET /_control/state.
type State struct {
	Variant            string         `json:"variant"`
	Faults             map[string]int `json:"faults"` // remaining firings; -1 forever, 0 disarmed
	Sessions           int            `json:"sessions"`
	NoticePending      bool           `json:"notice_pending"`
	NoticeAcknowledged int            `json:"notice_acknowledged"`
	Requests           map[string]int `json:"requests"` // "METHOD /path" → count, control routes excluded
	// Posts counts content POSTs received per path ("/content/search" → n),
	// whatever their answer, so a test can prove a reload re-sent no form.
	Posts map[string]int `json:"posts"`
	// Shapes is what the task-shape pages hold (shapes.go).
	Shapes Shapes `json:"shapes"`
}

// transfer is a reviewed transfer waiting for its one-time token.
type transfer struct {
	Member string
	From   string
	To     string
	Amount int64 // cents
}

// maxRequestKeys bounds the request counter map against hostile clients.
const maxRequestKeys = 256

// state is everything a reset clears. Server.mu guards it.
type state struct {
	gen           int // counts resets; never reset, so ids from before a reset stay dead
	variant       string
	faults        map[string]int
	skip          map[string]int // eligible requests a fault lets through before firing
	sessionSeq    int
	sessions      map[string]string // session id → operator
	noticePending bool
	noticeAcks    int
	tokenSeq      int
	pending       map[string]transfer // review token → transfer
	trfSeq        int
	subSeq        int
	ledger        []LedgerEntry
	requests      map[string]int
	posts         map[string]int
	dropMarks     map[string]bool // sessions session_drop_after_signon drops on their next content request
	lastMember    string          // the last member record viewed, for stale_result
	drift         driftState      // see drift.go
	shapes        shapesState     // see shapes_state.go
}

// reset empties the state and selects variant.
func (st *state) reset(variant string) {
	*st = state{
		gen:       st.gen + 1,
		variant:   variant,
		faults:    make(map[string]int),
		skip:      make(map[string]int),
		sessions:  make(map[string]string),
		pending:   make(map[string]transfer),
		requests:  make(map[string]int),
		posts:     make(map[string]int),
		dropMarks: make(map[string]bool),
		shapes:    newShapesState(),
	}
}

func (st *state) snapshot() State {
	faults := make(map[string]int, len(faultNames))
	for _, f := range faultNames {
		faults[f] = st.faults[f]
	}
	requests := make(map[string]int, len(st.requests))
	for k, n := range st.requests {
		requests[k] = n
	}
	posts := make(map[string]int, len(st.posts))
	for k, n := range st.posts {
		posts[k] = n
	}
	return State{
		Posts:              posts,
		Variant:            st.variant,
		Faults:             faults,
		Sessions:           len(st.sessions),
		NoticePending:      st.noticePending,
		NoticeAcknowledged: st.noticeAcks,
		Requests:           requests,
		Shapes:             st.shapes.snapshot(),
	}
}

// The methods below lock Server.mu themselves; each is one atomic step.

func (s *Server) currentVariant() variant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return variant{Name: s.st.variant}
}

func (s *Server) setVariant(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.variant = v
}

func (s *Server) resetState() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.reset(s.opts.Variant)
}

func (s *Server) stateSnapshot() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.snapshot()
}

func (s *Server) ledgerSnapshot() []LedgerEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]LedgerEntry{}, s.st.ledger...)
}

// countRequest records one request under "METHOD /path", collapsing member
// numbers so the map stays small, and a content POST under its path.
func (s *Server) countRequest(method, path string) {
	if rest, ok := strings.CutPrefix(path, memberPrefix); ok {
		sub := ""
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			sub = rest[i:] // historySuffix, checklistSuffix, branchSuffix
		}
		path = memberPrefix + "{id}" + sub
	}
	key := method + " " + path
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.requests[key]; !ok && len(s.st.requests) >= maxRequestKeys {
		key = "other"
	}
	s.st.requests[key]++
	if method != http.MethodPost || !strings.HasPrefix(path, contentPrefix) {
		return
	}
	if _, ok := s.st.posts[path]; !ok && len(s.st.posts) >= maxRequestKeys {
		path = "other"
	}
	s.st.posts[path]++
}

func (s *Server) newSession(operator string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.sessionSeq++
	id := fmt.Sprintf("md-%d-%04d", s.st.gen, s.st.sessionSeq)
	s.st.sessions[id] = operator
	return id
}

func (s *Server) lookupSession(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	op, ok := s.st.sessions[id]
	return op, ok
}

func (s *Server) dropSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.st.sessions, id)
}

// newToken stores t under a fresh one-time review token.
func (s *Server) newToken(t transfer) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.tokenSeq++
	tok := fmt.Sprintf("tok-%d-%04d", s.st.gen, s.st.tokenSeq)
	s.st.pending[tok] = t
	return tok
}

func (s *Server) peekToken(tok string) (transfer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.st.pending[tok]
	return t, ok
}

func (s *Server) openSubaccount(memberNo, accountType string, deposit int64, operator string) LedgerEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.subSeq++
	e := LedgerEntry{
		Seq:            len(s.st.ledger) + 1,
		Kind:           "subaccount_opened",
		Date:           asOf,
		Confirmation:   fmt.Sprintf("SUB-%04d", s.st.subSeq),
		Member:         memberNo,
		Operator:       operator,
		AccountType:    accountType,
		InitialDeposit: plainAmount(deposit),
	}
	s.st.ledger = append(s.st.ledger, e)
	return e
}
