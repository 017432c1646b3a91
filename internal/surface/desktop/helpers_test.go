package desktop_test

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

func newEngine(tb testing.TB, app string) *policy.Engine {
	tb.Helper()
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{app}})
	if err != nil {
		tb.Fatal(err)
	}
	return eng
}

func authorize(tb testing.TB, eng *policy.Engine, a domain.Action, n *domain.Node, text string) policy.AuthorizedAction {
	tb.Helper()
	a.Actor = domain.ActorAutomation
	aa, err := eng.Authorize(policy.Request{Action: a, Node: n, Text: text})
	if err != nil {
		tb.Fatalf("authorize %s: %v", a.Type, err)
	}
	return aa
}

func nav(tb testing.TB, eng *policy.Engine, u string) policy.AuthorizedAction {
	tb.Helper()
	return authorize(tb, eng, domain.Action{Type: domain.ActNavigate, URL: u}, nil, "")
}
