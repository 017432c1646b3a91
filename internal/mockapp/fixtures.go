package mockapp

import (
	"strconv"
	"strings"
)

// asOf is the business date every balance is reported at. It is fixture
// data, not a clock reading, so every run renders the same page.
const asOf = "11/30/2026"

// member is one fixture record of the core system.
type member struct {
	Number     string
	Name       string
	Status     string // "Active" or "Closed"
	Savings    int64  // cents; meaningful only when HasSavings
	HasSavings bool
	Restricted bool // shown only as "Restricted Record"
}

// members are the fixture records, keyed by member number.
var members = map[string]member{
	"12345": {Number: "12345", Name: "Jane Doe", Status: "Active", Savings: 123456, HasSavings: true},
	"23456": {Number: "23456", Name: "Robert Roe", Status: "Closed", Savings: 0, HasSavings: true},
	"34567": {Number: "34567", Name: "Ann Example", Status: "Active"},
	"45678": {Number: "45678", Restricted: true},
	"56789": {Number: "56789", Name: "Carl Large", Status: "Active", Savings: 1234567890, HasSavings: true},
}

// isMemberNumber reports whether s is exactly five ASCII digits.
func isMemberNumber(s string) bool {
	return len(s) == 5 && allDigits(s)
}

// memberRows returns the label/value rows of the member page, in the row
// order of the variant.
func memberRows(m member, v variant) []row {
	byKey := map[string]row{
		"number": {"Member number", m.Number},
		"name":   {"Name", m.Name},
		"status": {"Status", m.Status},
		"asof":   {"As of", asOf},
	}
	order := []string{"number", "name", "status", "savings", "asof"}
	if v.Alt() {
		order = []string{"name", "savings", "asof", "status", "number"}
	}
	if m.HasSavings {
		byKey["savings"] = row{v.SavingsLabel(), formatMoney(m.Savings)}
	}
	rows := make([]row, 0, len(order))
	for _, k := range order {
		if r, ok := byKey[k]; ok {
			rows = append(rows, r)
		}
	}
	return rows
}

// row is one label cell / value cell pair of a layout table.
type row struct {
	Label string
	Value string
}

// maxMoneyDigits bounds the integer part of an amount so cents fit an int64.
const maxMoneyDigits = 12

// parseMoney parses a non-negative amount such as "100", "100.5", "1,234.56"
// or "$1,234.56" into cents. Thousands separators must group by three.
func parseMoney(s string) (int64, bool) {
	s = strings.TrimPrefix(s, "$")
	whole, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac && (len(frac) < 1 || len(frac) > 2 || !allDigits(frac)) {
		return 0, false
	}
	if strings.Contains(whole, ",") {
		groups := strings.Split(whole, ",")
		if len(groups[0]) < 1 || len(groups[0]) > 3 {
			return 0, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, false
			}
		}
		whole = strings.Join(groups, "")
	}
	if len(whole) < 1 || len(whole) > maxMoneyDigits || !allDigits(whole) {
		return 0, false
	}
	units, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, false
	}
	cents := int64(0)
	if hasFrac {
		if len(frac) == 1 {
			frac += "0"
		}
		c, err := strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, false
		}
		cents = c
	}
	return units*100 + cents, true
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatMoney renders cents as "$1,234.56".
func formatMoney(cents int64) string {
	return "$" + groupThousands(cents/100) + "." + twoDigits(cents%100)
}

// plainAmount renders cents as "1234.56", the form used in the ledger.
func plainAmount(cents int64) string {
	return strconv.FormatInt(cents/100, 10) + "." + twoDigits(cents%100)
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
