package mockapp

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/statewire"
)

var (
	headerCell  = regexp.MustCompile(`<th scope="col"[^>]*>([^<]*)</th>`)
	historyRow  = regexp.MustCompile(`<tr class="[^"]*">((?:<td[^>]*>[^<]*</td>)+)</tr>`)
	historyCell = regexp.MustCompile(`<td[^>]*>([^<]*)</td>`)
)

// historyTable reads the Transfer History page's column headers and rows.
func historyTable(body string) ([]string, [][]string) {
	var cols []string
	for _, m := range headerCell.FindAllStringSubmatch(body, -1) {
		cols = append(cols, m[1])
	}
	var rows [][]string
	for _, m := range historyRow.FindAllStringSubmatch(body, -1) {
		var cells []string
		for _, c := range historyCell.FindAllStringSubmatch(m[1], -1) {
			cells = append(cells, c[1])
		}
		rows = append(rows, cells)
	}
	return cols, rows
}

// TestTransferHistoryPage: Member Details links to the member's Transfer
// History, which lists the ledger's transfers of that member as they are
// (a partial save's truncated amount, another writer's entry), in a table
// with column headers, and offers nothing that changes anything.
func TestTransferHistoryPage(t *testing.T) {
	t.Parallel()
	for _, v := range []string{VariantA, VariantB, VariantC} {
		t.Run("variant "+v, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Options{Variant: v})
			b.signOn(t)
			if r := b.get(t, memberPrefix+"12345"); !hasLink(r.body, "Transfer history") || !strings.Contains(r.body, `href="/content/member/12345/history"`) {
				t.Fatalf("Member Details has no link \"Transfer history\" to the history: %q", r.body)
			}
			r := b.get(t, memberPrefix+"12345"+historySuffix)
			if r.status != http.StatusOK || !hasHeading(r.body, "Transfer History") || !hasRole(r.body, "status", historyEmpty) {
				t.Fatalf("empty history = %d: %q", r.status, r.body)
			}
			b.arm(t, FaultPartialSave, 1)
			b.submitPage(t, b.review(t, b.client, "12345", "Savings", "Checking", "25.75"))
			b.arm(t, FaultStaleOverwrite, 1)
			b.submitPage(t, b.review(t, b.client, "12345", "Checking", "Savings", "1,000.00"))
			b.submitPage(t, b.review(t, b.client, "56789", "Savings", "Checking", "3.00"))
			r = b.get(t, memberPrefix+"12345"+historySuffix)
			cols, rows := historyTable(r.body)
			if strings.Join(cols, "|") != "Date|From|To|Amount|Reference number" {
				t.Fatalf("column headers = %q", cols)
			}
			want := [][]string{
				{"11/30/2026", "Savings", "Checking", "$25.00", "TRF-0001"},
				{"11/30/2026", "Checking", "Savings", "$250.00", "TRF-0002"},
				{"11/30/2026", "Checking", "Savings", "$1,000.00", "TRF-0003"},
			}
			if !equalRows(rows, want) {
				t.Fatalf("history of 12345 = %q, want %q", rows, want)
			}
			if strings.Contains(r.body, "<form") || strings.Contains(r.body, "<button") || strings.Contains(r.body, "<input") {
				t.Errorf("the history page has a control that could change something: %q", r.body)
			}
			if !hasLink(r.body, "Member details") {
				t.Errorf("the history page has no way back to Member Details")
			}
			if _, rows := historyTable(b.get(t, memberPrefix+"56789"+historySuffix).body); !equalRows(rows, [][]string{{"11/30/2026", "Savings", "Checking", "$3.00", "TRF-0004"}}) {
				t.Errorf("history of 56789 = %q", rows)
			}
			if n := b.state(t).Requests["GET /content/member/{id}/history"]; n != 3 {
				t.Errorf("history requests counted %d, want 3", n)
			}
		})
	}
}

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "|") != strings.Join(b[i], "|") {
			return false
		}
	}
	return true
}

// TestTransferHistoryRefusals: the history of a malformed, unknown or
// restricted member is the member page's answer for it; signed off, it
// redirects to sign-on; it is read-only (405 to a POST).
func TestTransferHistoryRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	if r := b.get(t, memberPrefix+"12345"+historySuffix); r.status != http.StatusSeeOther || r.location() != signonPath {
		t.Errorf("signed off = %d → %q, want 303 to sign-on", r.status, r.location())
	}
	b.signOn(t)
	for _, tc := range []struct {
		number string
		status int
		text   string
	}{
		{"1234x", http.StatusBadRequest, "Invalid member number"},
		{"99999", http.StatusNotFound, "Member not found"},
		{"45678", http.StatusOK, "This record is restricted"},
	} {
		r := b.get(t, memberPrefix+tc.number+historySuffix)
		if r.status != tc.status || !strings.Contains(r.body, tc.text) || strings.Contains(r.body, "Transfer History") {
			t.Errorf("history of %s = %d %q, want %d with %q", tc.number, r.status, r.body, tc.status, tc.text)
		}
	}
	if r := b.post(t, memberPrefix+"12345"+historySuffix, nil); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST history = %d, want 405", r.status)
	}
}

// TestAutomationHistory: over the state contract, the member screen's link
// "Transfer history" opens the history screen, whose table a state
// surface reads cell by row (the reference number) and column (the
// header).
func TestAutomationHistory(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultDuplicateSubmit, 1)
	b.submitPage(t, b.review(t, b.client, "12345", "Savings", "Checking", "7.50"))
	b.autoSignOn(t)
	st := b.autoSearch(t, "12345")
	ans := b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "link", "Transfer history").ID, Action: "click"})
	if !ans.Navigated {
		t.Error("the Transfer history link did not navigate")
	}
	st = b.autoGet(t, "")
	if st.AppState["screen"] != screenHistory || st.AppState["member"] != "12345" || st.AppState["path"] != "/content/member/12345/history" {
		t.Fatalf("app_state = %v", st.AppState)
	}
	ctl(t, st, "content", "heading", "Transfer History")
	ctl(t, st, "content", "heading", "Member 12345")
	table := ctl(t, st, "content", "table", "Transfer history")
	var cols []string
	cells := map[string]string{} // "row region/column" → value
	for _, c := range st.Controls {
		switch c.Role {
		case "columnheader":
			cols = append(cols, c.Name)
		case "cell":
			var row statewire.Control
			for _, r := range st.Controls {
				if r.ID == c.Parent {
					row = r
				}
			}
			if row.Role != "row" || row.Parent != table.ID {
				t.Fatalf("cell %+v is not in a row of the table", c)
			}
			cells[row.Region+"/"+c.Region] = c.Name
		}
	}
	if strings.Join(cols, "|") != strings.Join(historyColumns, "|") {
		t.Errorf("column headers = %q", cols)
	}
	for k, v := range map[string]string{"TRF-0001/Amount": "$7.50", "TRF-0002/Amount": "$7.50", "TRF-0002/From": "Savings", "TRF-0001/Date": "11/30/2026", "TRF-0002/Reference number": "TRF-0002"} {
		if cells[k] != v {
			t.Errorf("cell %s = %q, want %q (cells %v)", k, cells[k], v, cells)
		}
	}
	b.mustAct(t, statewire.ActRequest{Control: ctl(t, st, "content", "link", "Member details").ID, Action: "click"})
	if st = b.autoGet(t, ""); st.AppState["screen"] != screenMember {
		t.Errorf("back from the history: %v", st.AppState)
	}
	// Another member: no transfers.
	b.mustAct(t, statewire.ActRequest{Action: "navigate", URL: b.base + "/content/member/56789/history"})
	if st = b.autoGet(t, ""); !hasCtl(st, "status", historyEmpty) || hasCtl(st, "table", "Transfer history") {
		t.Errorf("history of 56789: %+v", st.Controls)
	}
}
