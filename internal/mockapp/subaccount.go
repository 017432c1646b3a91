package mockapp

import (
	"net/http"
	"slices"
)

// accountTypes are the options of the sub-account "Account type" select.
var accountTypes = []string{"Savings", "Checking", "Certificate"}

// subaccountData feeds the Open Sub-Account form, whose controls are named
// only by the label cell of their table row.
type subaccountData struct {
	Member      string
	AccountType string
	Deposit     string
	Types       []string
}

func subaccountPage(d subaccountData) page {
	d.Member, d.Deposit, d.Types = clip(d.Member), clip(d.Deposit), accountTypes
	return page{tmpl: tmplSubaccount, title: "Open Sub-Account", data: d, back: subaccountPath}
}

func (s *Server) handleSubaccountForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, subaccountPage(subaccountData{AccountType: accountTypes[0]}))
}

func (s *Server) handleSubaccount(w http.ResponseWriter, r *http.Request) {
	sess, ok := signedOn(w, r)
	if !ok {
		return
	}
	d := subaccountData{
		Member:      r.PostFormValue("member"),
		AccountType: r.PostFormValue("account_type"),
		Deposit:     r.PostFormValue("deposit"),
	}
	form := subaccountPage(d)
	if !s.formPrelude(w, r, form) {
		return
	}
	deposit, okDeposit := parseMoney(d.Deposit)
	switch {
	case memberProblem(d.Member) != "":
		form.alert = memberProblem(d.Member)
	case !slices.Contains(accountTypes, d.AccountType):
		form.alert = "Account type must be Savings, Checking or Certificate"
	case !okDeposit:
		form.alert = "Initial deposit must be a money amount such as 100.00"
	}
	if form.alert != "" {
		form.status = http.StatusBadRequest
		s.render(w, r, form)
		return
	}
	e := s.openSubaccount(d.Member, d.AccountType, deposit, sess.Operator)
	s.logger.Info("sub-account opened", "confirmation", e.Confirmation)
	s.render(w, r, messagePage(http.StatusOK, "Sub-account opened", messageData{
		Heading: "Sub-account opened",
		Text:    "Confirmation " + e.Confirmation,
		Rows: []row{
			{"Member number", e.Member},
			{"Account type", e.AccountType},
			{"Initial deposit", formatMoney(deposit)},
		},
	}))
}

// memberProblem returns the alert for a member number that a form cannot
// act on, naming the field, or "" when the member is usable.
func memberProblem(number string) string {
	m, ok := members[number]
	switch {
	case !isMemberNumber(number):
		return "Member number must be 5 digits"
	case !ok:
		return "Member number not found"
	case m.Restricted:
		return "Member number is a restricted record"
	case m.Status == "Closed":
		return "Member number is a closed account"
	}
	return ""
}
