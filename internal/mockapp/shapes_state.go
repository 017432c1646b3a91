package mockapp

import (
	"fmt"
	"slices"
)

// The state of the task-shape pages (shapes.go): saved checklists, home
// branches, the approvals queue, the important notice's per-session
// counter and the shape drift. Server.mu guards it; a reset clears it.

// Approval is one row of the approvals queue, as GET /_control/state lists
// it under shapes.pending and shapes.approved.
type Approval struct {
	ID     string `json:"id"`
	Item   string `json:"item"`
	Amount string `json:"amount"` // plain decimal ("1250.00")
	// Reference is the approval's reference ("APV-0001"); empty while
	// pending.
	Reference string `json:"reference,omitempty"`
	Operator  string `json:"operator,omitempty"`
}

// Shapes is the control view of the task-shape pages (GET /_control/state,
// field "shapes"): what MemberDesk holds, so a test can check it rather
// than what a run reports.
type Shapes struct {
	// Checklists maps a member number to the document names its saved
	// checklist holds, in page order.
	Checklists map[string][]string `json:"checklists"`
	// ChecklistSaves counts checklist saves per member number.
	ChecklistSaves map[string]int `json:"checklist_saves"`
	// Branches maps a member number to its saved home branch code.
	Branches map[string]string `json:"branches"`
	// Pending and Approved are the approvals queue, in page order.
	Pending  []Approval `json:"pending"`
	Approved []Approval `json:"approved"`
	// ImportantNotices counts the important notices shown, and
	// ImportantAcks their acknowledgements.
	ImportantNotices int `json:"important_notices"`
	ImportantAcks    int `json:"important_acks"`
	// Drift is the shape drift in force, or nil (see shapes_drift.go).
	Drift *ShapeDrift `json:"drift"`
}

// checklistVisits counts one session's openings of a Document Checklist.
type checklistVisits struct {
	n       int  // openings counted
	pending bool // the important notice is showing, not yet acknowledged
	resume  bool // acknowledged: the next opening is the same visit
}

// shapesState is the shape pages' part of state.
type shapesState struct {
	checklists map[string][]string
	saves      map[string]int
	branches   map[string]string
	queue      []approvalRow
	apvSeq     int
	visits     map[string]*checklistVisits // session id → its counter
	notices    int
	acks       int
	drift      *ShapeDrift
}

// approvalRow is one queue entry; Cents is its amount.
type approvalRow struct {
	ID, Item, Reference, Operator string
	Cents                         int64
}

func newShapesState() shapesState {
	return shapesState{
		checklists: map[string][]string{},
		saves:      map[string]int{},
		branches:   map[string]string{},
		queue:      approvalFixture(""),
		visits:     map[string]*checklistVisits{},
	}
}

func (st *shapesState) snapshot() Shapes {
	out := Shapes{
		Checklists:       map[string][]string{},
		ChecklistSaves:   map[string]int{},
		Branches:         map[string]string{},
		Pending:          []Approval{},
		Approved:         []Approval{},
		ImportantNotices: st.notices,
		ImportantAcks:    st.acks,
	}
	for m, items := range st.checklists {
		out.Checklists[m] = slices.Clone(items)
	}
	for m, n := range st.saves {
		out.ChecklistSaves[m] = n
	}
	for m, b := range st.branches {
		out.Branches[m] = b
	}
	for _, a := range st.queue {
		v := Approval{ID: a.ID, Item: a.Item, Amount: plainAmount(a.Cents), Reference: a.Reference, Operator: a.Operator}
		if a.Reference == "" {
			out.Pending = append(out.Pending, v)
		} else {
			out.Approved = append(out.Approved, v)
		}
	}
	if st.drift != nil {
		d := *st.drift
		out.Drift = &d
	}
	return out
}

// checklistOpened counts an opening of a checklist page by session sess
// and reports whether the important notice shows instead: on the third,
// sixth, … opening, and again on every opening until it is acknowledged.
// The opening that follows an acknowledgement is the same visit and is
// not counted.
func (s *Server) checklistOpened(sess string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.shapes.visits[sess]
	if v == nil {
		if len(s.st.shapes.visits) >= maxRequestKeys {
			clear(s.st.shapes.visits)
		}
		v = &checklistVisits{}
		s.st.shapes.visits[sess] = v
	}
	switch {
	case v.pending:
	case v.resume:
		v.resume = false
		return false
	default:
		v.n++
		if v.n%importantEvery != 0 {
			return false
		}
		v.pending = true
	}
	s.st.shapes.notices++
	return true
}

// ackImportant acknowledges sess's important notice, if one is showing.
func (s *Server) ackImportant(sess string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.shapes.visits[sess]
	if v == nil || !v.pending {
		return false
	}
	v.pending, v.resume = false, true
	s.st.shapes.acks++
	return true
}

// savedChecklist returns member's saved documents.
func (s *Server) savedChecklist(member string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items, ok := s.st.shapes.checklists[member]
	return slices.Clone(items), ok
}

func (s *Server) saveChecklist(member string, items []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.shapes.checklists[member] = slices.Clone(items)
	s.st.shapes.saves[member]++
}

func (s *Server) homeBranch(member string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.shapes.branches[member]
}

func (s *Server) setHomeBranch(member, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.shapes.branches[member] = code
}

func (s *Server) approvalQueue() []approvalRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.shapes.queue)
}

// approve moves pending row id to approved under a new reference; ok is
// false when no pending row has that id (unknown or already approved).
func (s *Server) approve(id, operator string) (approvalRow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.shapes.queue, func(a approvalRow) bool { return a.ID == id && a.Reference == "" })
	if i < 0 {
		return approvalRow{}, false
	}
	s.st.shapes.apvSeq++
	a := &s.st.shapes.queue[i]
	a.Reference = fmt.Sprintf("APV-%04d", s.st.shapes.apvSeq)
	a.Operator = operator
	return *a, true
}

func (s *Server) shapeDrift() *ShapeDrift {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.shapes.drift
}
