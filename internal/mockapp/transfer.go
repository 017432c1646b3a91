package mockapp

import (
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
)

// The options of the transfer form's selects, in display order.
var (
	fromAccounts = []string{"Savings", "Checking"}
	toAccounts   = []string{"Checking", "Savings"}
)

// transferData feeds the Transfer Funds form.
type transferData struct {
	Member      string
	From        string
	To          string
	Amount      string
	FromOptions []string
	ToOptions   []string
}

func transferPage(d transferData) page {
	d.Member, d.Amount = clip(d.Member), clip(d.Amount)
	d.FromOptions, d.ToOptions = fromAccounts, toAccounts
	return page{tmpl: tmplTransfer, title: "Transfer Funds", data: d, back: transferPath}
}

func (s *Server) handleTransferForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, transferPage(transferData{From: fromAccounts[0], To: toAccounts[0]}))
}

// handleReview validates the transfer form and answers the review page with
// a one-time token for it.
func (s *Server) handleReview(w http.ResponseWriter, r *http.Request) {
	d := transferData{
		Member: r.PostFormValue("member"),
		From:   r.PostFormValue("from"),
		To:     r.PostFormValue("to"),
		Amount: r.PostFormValue("amount"),
	}
	form := transferPage(d)
	if !s.formPrelude(w, r, form) {
		return
	}
	amount, okAmount := parseMoney(d.Amount)
	switch {
	case memberProblem(d.Member) != "":
		form.alert = memberProblem(d.Member)
	case !slices.Contains(fromAccounts, d.From):
		form.alert = "From account must be Savings or Checking"
	case !slices.Contains(toAccounts, d.To):
		form.alert = "To account must be Checking or Savings"
	case d.From == d.To:
		form.alert = "To account must differ from From account"
	case !members[d.Member].HasSavings && d.From == "Savings":
		form.alert = "From account Savings is not on file for this member"
	case !members[d.Member].HasSavings && d.To == "Savings":
		form.alert = "To account Savings is not on file for this member"
	case !okAmount || amount == 0:
		form.alert = "Amount must be a money amount greater than zero"
	}
	if form.alert != "" {
		form.status = http.StatusBadRequest
		s.render(w, r, form)
		return
	}
	t := transfer{Member: d.Member, From: d.From, To: d.To, Amount: amount}
	s.render(w, r, s.reviewPage(s.newToken(t), t))
}

// reviewData feeds the Review Transfer page.
type reviewData struct {
	Token    string
	Summary  string
	Rows     []row
	OnSubmit template.HTMLAttr
}

func (s *Server) reviewPage(token string, t transfer) page {
	v := s.currentVariant()
	amount := formatMoney(t.Amount)
	return page{
		tmpl:  tmplReview,
		title: "Review Transfer",
		back:  transferPath,
		v:     v,
		data: reviewData{
			Token:   token,
			Summary: fmt.Sprintf("Transfer %s from %s to %s for member %s.", amount, t.From, t.To, t.Member),
			Rows: []row{
				{"Member number", t.Member},
				{"From account", t.From},
				{"To account", t.To},
				{"Amount", amount},
			},
			OnSubmit: confirmAttr(fmt.Sprintf("%s of %s from %s to %s? This cannot be undone.", v.SubmitButton(), amount, t.From, t.To)),
		},
	}
}

// confirmAttr builds the submit form's onsubmit attribute. Its message is
// made of validated values only; anything that could leave the JS string
// or the attribute falls back to a fixed message.
func confirmAttr(msg string) template.HTMLAttr {
	if strings.ContainsAny(msg, "'\"\\<>&\r\n") {
		msg = "Submit this transfer? This cannot be undone."
	}
	return template.HTMLAttr(`onsubmit="return confirm('` + msg + `')"`)
}

// handleSubmit posts a reviewed transfer once. A reused or unknown token is
// answered 409 and posts nothing, so a replayed submit never double-posts
// (unless a write fault, writefaults.go, makes it).
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	sess, ok := signedOn(w, r)
	if !ok {
		return
	}
	token := r.PostFormValue("token")
	form := transferPage(transferData{From: fromAccounts[0], To: toAccounts[0]})
	if t, ok := s.peekToken(token); ok {
		form = s.reviewPage(token, t)
	}
	if !s.formPrelude(w, r, form) {
		return
	}
	res, ok := s.submitTransfer(token, sess.Operator)
	if !ok {
		s.logger.Info("transfer refused: token unknown or used")
		s.render(w, r, messagePage(http.StatusConflict, "Transfer Not Posted", messageData{
			Heading: "Transfer Not Posted",
			Text:    "This transfer was already submitted",
			Role:    "alert",
		}))
		return
	}
	switch res.fault {
	case FaultTimeoutAfterWrite:
		s.holdResponse(w, r)
		return
	case FaultResetAfterWrite:
		s.resetConnection(w)
		return
	}
	s.logger.Info("transfer posted", "confirmation", res.shown.Confirmation, "write_fault", res.fault)
	t := res.t
	done := messagePage(http.StatusOK, "Transfer Complete", messageData{
		Heading: "Transfer Complete",
		Text:    "Confirmation " + res.shown.Confirmation,
		Rows: []row{
			{"Member number", t.Member},
			{"From account", t.From},
			{"To account", t.To},
			{"Amount", formatMoney(t.Amount)},
		},
	})
	if res.fault == FaultOptimisticThenReject {
		done.fresh = messageData{Heading: "Transfer Rejected", Text: rejectText, Role: "alert"}
	}
	done.survey = s.fire(FaultDialogAfterSubmit)
	s.render(w, r, done)
}
