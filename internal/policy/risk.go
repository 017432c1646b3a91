package policy

import (
	"strings"
	"unicode"

	"github.com/cuahq/cua/internal/domain"
)

// Lexicon phrases are matched as whole words against a control's folded name
// and description. Irreversible wins over elevated.
var (
	irreversibleWords = []string{
		"transfer", "transfers", "transferring", "delete", "deletes", "deleting", "remove", "removes", "removing",
		"close account", "closing account", "close the account", "wire", "wires", "wiring",
		"pay", "pays", "paying", "payment", "payments", "withdraw", "withdraws", "withdrawing", "withdrawal", "withdrawals",
		"disburse", "disbursement", "purge", "terminate", "destroy", "post transfer",
		"charge off", "write off", "void", "refund", "refunds", "revoke", "revokes", "deactivate", "erase",
		"cancel card", "cancel membership", "cancel account", "cancel payment", "cancel loan", "suspend", "freeze",
	}
	elevatedWords = []string{
		"submit", "submits", "submitting", "confirm", "confirms", "confirming", "save", "apply", "approve", "approves",
		"send", "sends", "update", "updates", "post", "posts", "open account", "create", "authorize", "accept",
		"continue", "ok", "yes", "agree",
	}
)

// neutralWords mark a control that only shows or abandons something
// ("Review transfer", "Cancel payment"): it is safe whatever else its name
// says, unless the name joins a second action ("Review and submit payment").
var neutralWords = []string{"review", "preview", "view", "back", "history", "search", "find"}

// actingRoles are the roles whose names the lexicon judges: controls that
// commit something. Links and fields navigate or edit; they commit nothing on
// their own.
var actingRoles = map[string]bool{
	"button": true, "menuitem": true, "option": false, "link": false,
}

// Classify returns the risk the action carries by its type and by the name of
// the control it lands on.
func Classify(a domain.Action, n *domain.Node) domain.Risk {
	tier := domain.RiskSafe
	if a.Type == domain.ActRawInput {
		tier = domain.RiskElevated
	}
	if n == nil || !clicks(a.Type) || !actingRoles[n.Role] {
		return tier
	}
	if dismissals[fold(n.Name)] {
		// "Cancel" on a confirm dialog abandons what the dialog asks about.
		return tier
	}
	return domain.MaxRisk(tier, NameRisk(n.Name+" "+n.Description))
}

// dismissals are control names that only abandon or close what is shown.
var dismissals = map[string]bool{"cancel": true, "no": true, "dismiss": true, "close": true, "not now": true}

func clicks(t domain.ActionType) bool {
	return t == domain.ActClick || t == domain.ActRawInput || t == domain.ActPressKey
}

// NameRisk classifies a control name with the lexicon.
func NameRisk(name string) domain.Risk {
	f := " " + fold(name) + " "
	compound := strings.Contains(f, " and ") || strings.Contains(f, " then ") || strings.Contains(name, "&") || strings.Contains(name, "+")
	for _, w := range neutralWords {
		if strings.HasPrefix(f, " "+w+" ") && !compound {
			return domain.RiskSafe
		}
	}
	for _, w := range irreversibleWords {
		if strings.Contains(f, " "+w+" ") {
			return domain.RiskIrreversible
		}
	}
	for _, w := range elevatedWords {
		if strings.Contains(f, " "+w+" ") {
			return domain.RiskElevated
		}
	}
	return domain.RiskSafe
}

func fold(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}
