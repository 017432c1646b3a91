package mockapp

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/cuahq/cua/internal/statewire"
)

// The Transfer History screen: GET /content/member/{id}/history, reached
// by the link "Transfer history" on Member Details. It lists, read-only,
// the member's transfer entries in the ledger as they are (so a write
// fault's truth shows: a truncated amount, a duplicate, another writer's
// entry, an entry whose page never came), oldest first, in a table whose
// column headers are historyColumns. It holds no control that changes
// anything: its only link goes back to Member Details.

// historyColumns are the history table's column headers, in order.
var historyColumns = []string{"Date", "From", "To", "Amount", "Reference number"}

// historyEmpty is the status a member with no transfers shows.
const historyEmpty = "No transfers on file"

// historyData feeds the Transfer History page.
type historyData struct {
	Number  string
	Columns []string
	Entries [][]string // one row of cells per entry, in historyColumns order
	Empty   string
}

// memberHistory returns the cells of number's transfer entries, oldest
// first.
func (s *Server) memberHistory(number string) [][]string {
	var rows [][]string
	for _, e := range s.ledgerSnapshot() {
		if e.Kind != "transfer" || e.Member != number {
			continue
		}
		rows = append(rows, []string{e.Date, e.From, e.To, ledgerMoney(e.Amount), e.Confirmation})
	}
	return rows
}

// ledgerMoney renders a ledger amount ("1234.50") as the pages do
// ("$1,234.50"); an amount it cannot read is shown as stored.
func ledgerMoney(amount string) string {
	cents, ok := parseMoney(amount)
	if !ok {
		return amount
	}
	return formatMoney(cents)
}

// memberGate answers a member path whose number is malformed, unknown or
// restricted with its message page and reports false; else it returns the
// member.
func (s *Server) memberGate(w http.ResponseWriter, r *http.Request, number string) (member, bool) {
	if !isMemberNumber(number) {
		s.render(w, r, messagePage(http.StatusBadRequest, "Invalid Member Number", messageData{
			Heading: "Invalid Member Number",
			Text:    "Invalid member number",
			Role:    "alert",
		}))
		return member{}, false
	}
	m, ok := members[number]
	switch {
	case !ok:
		s.render(w, r, messagePage(http.StatusNotFound, "Member Not Found", messageData{
			Heading: "Member Not Found",
			Text:    "Member not found",
			Role:    "status",
		}))
		return member{}, false
	case m.Restricted:
		s.render(w, r, messagePage(http.StatusOK, "Restricted Record", messageData{
			Heading: "Restricted Record",
			Text:    "This record is restricted. Refer to a supervisor.",
		}))
		return member{}, false
	}
	return m, true
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	m, ok := s.memberGate(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	s.render(w, r, page{tmpl: tmplHistory, title: "Transfer History", data: historyData{
		Number:  m.Number,
		Columns: slices.Clone(historyColumns),
		Entries: s.memberHistory(m.Number),
		Empty:   historyEmpty,
	}})
}

// historyControls are the state contract's Transfer History table (ids
// unprefixed): a table "Transfer history"; a header row whose
// columnheader cells are historyColumns; per entry a row whose region is
// its reference number, holding one cell per column named by the value,
// whose region is the column header. With no entry, the status
// historyEmpty instead. a.mu must be held.
func (a *automation) historyControls() []statewire.Control {
	rows := a.s.memberHistory(a.sess.member)
	if len(rows) == 0 {
		return []statewire.Control{{ID: "history-empty", Role: "status", Name: historyEmpty}}
	}
	out := []statewire.Control{
		{ID: "history", Role: "table", Name: "Transfer history"},
		{ID: "history.head", Role: "row", Parent: "history"},
	}
	for i, col := range historyColumns {
		out = append(out, statewire.Control{ID: "history.head." + strconv.Itoa(i), Role: "columnheader", Name: col, Parent: "history.head"})
	}
	for i, cells := range rows {
		row := "history.row" + strconv.Itoa(i)
		ref := cells[len(cells)-1]
		out = append(out, statewire.Control{ID: row, Role: "row", Region: ref, Parent: "history"})
		for j, v := range cells {
			out = append(out, statewire.Control{ID: row + "." + strconv.Itoa(j), Role: "cell", Name: v, Region: historyColumns[j], Parent: row})
		}
	}
	return out
}
