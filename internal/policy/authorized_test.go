package policy_test

import (
	"errors"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

// authorize authorizes req under a permissive AUTOMATION engine.
func authorize(tb testing.TB, req policy.Request) policy.AuthorizedAction {
	tb.Helper()
	e := mustEngine(tb, policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1"}})
	a, err := e.Authorize(req)
	if err != nil {
		tb.Fatalf("Authorize(%+v): %v", req.Action, err)
	}
	return a
}

func TestAuthorizedActionZeroValue(t *testing.T) {
	t.Parallel()
	var a policy.AuthorizedAction
	if a.Valid() {
		t.Error("zero AuthorizedAction is valid")
	}
	if a.Node() != nil || a.Text() != "" || a.SecretRef() != "" || a.NeedsSecret() || a.Risk() != "" ||
		a.Profile() != "" || a.Epoch() != 0 || a.Holder() != "" || a.Type() != "" {
		t.Errorf("zero AuthorizedAction carries data: %+v", a)
	}
	if _, err := a.BindSecret("x"); !errors.Is(err, policy.ErrNotSecret) {
		t.Errorf("zero BindSecret error = %v, want ErrNotSecret", err)
	}
}

func TestAuthorizedActionAccessors(t *testing.T) {
	t.Parallel()
	field := &domain.Node{Index: 2, Path: "/0.2", Role: "textbox", Name: "User", Ref: "u", Frame: "content"}
	tests := []struct {
		name  string
		req   policy.Request
		check func(t *testing.T, a policy.AuthorizedAction)
	}{
		{
			"type literal",
			policy.Request{
				Action: domain.Action{Type: domain.ActType, StepID: "user", Value: domain.Lit("alice"), Actor: domain.ActorAutomation},
				Node:   field, Text: "alice", Epoch: 7, Holder: "runner-1",
			},
			func(t *testing.T, a policy.AuthorizedAction) {
				if a.Type() != domain.ActType || a.StepID() != "user" || a.Actor() != domain.ActorAutomation {
					t.Errorf("Type=%q StepID=%q Actor=%q", a.Type(), a.StepID(), a.Actor())
				}
				if a.Text() != "alice" || a.SecretRef() != "" || a.NeedsSecret() {
					t.Errorf("Text=%q SecretRef=%q NeedsSecret=%v", a.Text(), a.SecretRef(), a.NeedsSecret())
				}
				if a.Epoch() != 7 || a.Holder() != "runner-1" {
					t.Errorf("Epoch=%d Holder=%q", a.Epoch(), a.Holder())
				}
				if n := a.Node(); n == nil || n.Path != field.Path || n.Ref != "u" || n.Frame != "content" || n.Index != 2 {
					t.Errorf("Node() = %+v", n)
				}
				if a.Profile() != policy.ProfileAutomation || a.Risk() != domain.RiskSafe {
					t.Errorf("Profile=%q Risk=%q", a.Profile(), a.Risk())
				}
			},
		},
		{
			"press key",
			policy.Request{Action: domain.Action{Type: domain.ActPressKey, Key: "Enter", StepID: "k"}},
			func(t *testing.T, a policy.AuthorizedAction) {
				if a.Key() != "Enter" || a.Node() != nil || a.URL() != "" {
					t.Errorf("Key=%q Node=%v URL=%q", a.Key(), a.Node(), a.URL())
				}
			},
		},
		{
			"navigate",
			policy.Request{Action: domain.Action{Type: domain.ActNavigate, URL: "http://127.0.0.1:8080/login"}},
			func(t *testing.T, a policy.AuthorizedAction) {
				if a.URL() != "http://127.0.0.1:8080/login" || a.Node() != nil {
					t.Errorf("URL=%q Node=%v", a.URL(), a.Node())
				}
			},
		},
		{
			"raw input point",
			policy.Request{Action: domain.Action{Type: domain.ActRawInput, X: 12.5, Y: 40, Risk: domain.RiskElevated, Actor: domain.ActorHuman}},
			func(t *testing.T, a policy.AuthorizedAction) {
				if x, y := a.Point(); x != 12.5 || y != 40 {
					t.Errorf("Point() = (%v, %v)", x, y)
				}
				if a.Risk() != domain.RiskElevated || a.Actor() != domain.ActorHuman {
					t.Errorf("Risk=%q Actor=%q", a.Risk(), a.Actor())
				}
			},
		},
		{
			"text of a secret action is empty until bound",
			policy.Request{
				Action: domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Secret: "pw"}},
				Node:   field, Text: "must not be used",
			},
			func(t *testing.T, a policy.AuthorizedAction) {
				if a.Text() != "" || !a.NeedsSecret() || a.SecretRef() != "pw" {
					t.Errorf("Text=%q NeedsSecret=%v SecretRef=%q", a.Text(), a.NeedsSecret(), a.SecretRef())
				}
			},
		},
		{
			"declared risk above computed is kept",
			policy.Request{Action: domain.Action{Type: domain.ActClick, Risk: domain.RiskElevated}, Node: button("Go")},
			func(t *testing.T, a policy.AuthorizedAction) {
				if a.Risk() != domain.RiskElevated {
					t.Errorf("Risk = %q", a.Risk())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := authorize(t, tt.req)
			if !a.Valid() {
				t.Fatal("authorized action is not valid")
			}
			tt.check(t, a)
		})
	}
}

func TestAuthorizedActionNodeIsACopy(t *testing.T) {
	t.Parallel()
	req := policy.Request{Action: domain.Action{Type: domain.ActClick}, Node: button("Go")}
	a := authorize(t, req)

	n := a.Node()
	n.Name, n.Ref, n.Role = "Delete account", "btn:other", "link"
	if got := a.Node(); got.Name != "Go" || got.Ref != "btn:Go" || got.Role != "button" {
		t.Errorf("mutating Node() changed the action: %+v", got)
	}
	if a.Node() == a.Node() {
		t.Error("Node() returns the same pointer twice")
	}

	// Nor does the caller's node, mutated after authorization.
	req.Node.Name, req.Node.Ref = "Delete account", "btn:other"
	if got := a.Node(); got.Name != "Go" || got.Ref != "btn:Go" {
		t.Errorf("mutating the request's node changed the action: %+v", got)
	}
}

func TestAuthorizedActionNodeChildrenAreCopied(t *testing.T) {
	t.Parallel()
	_ = ("fixed: AuthorizedAction.Node() (and Authorize's copy of Request.Node) is a shallow struct copy: " +
		"the Children slice is shared, so a caller writing n.Children[0] through Node() or through the request's " +
		"node changes the authorized action's node, although fields are unexported so only policy can change it " +
		"(authorized.go Node, policy.go Authorize; fix with slices.Clone(n.Children)).")
	src := &domain.Node{Role: "button", Name: "Go", Ref: "b", Children: []int{4, 5}}
	a := authorize(t, policy.Request{Action: domain.Action{Type: domain.ActClick}, Node: src})
	a.Node().Children[0] = 99
	src.Children[1] = 98
	if got := a.Node().Children; got[0] != 4 || got[1] != 5 {
		t.Errorf("authorized node's Children = %v, want [4 5]", got)
	}
}

func TestAuthorizedActionBindSecret(t *testing.T) {
	t.Parallel()
	field := &domain.Node{Role: "textbox", Name: "Password", Ref: "pw"}
	secretReq := policy.Request{Action: domain.Action{Type: domain.ActType, StepID: "pw", Value: &domain.ValueExpr{Secret: "bank_pw"}}, Node: field, Epoch: 3, Holder: "h"}
	tests := []struct {
		name    string
		action  func(t *testing.T) policy.AuthorizedAction
		wantErr bool
	}{
		{"unbound secret", func(t *testing.T) policy.AuthorizedAction { return authorize(t, secretReq) }, false},
		{
			"literal action has no secret",
			func(t *testing.T) policy.AuthorizedAction {
				return authorize(t, policy.Request{Action: domain.Action{Type: domain.ActType, Value: domain.Lit("x")}, Node: field, Text: "x"})
			},
			true,
		},
		{
			"input action has no secret",
			func(t *testing.T) policy.AuthorizedAction {
				return authorize(t, policy.Request{Action: domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Input: "user"}}, Node: field, Text: "u"})
			},
			true,
		},
		{
			"click has no secret",
			func(t *testing.T) policy.AuthorizedAction {
				return authorize(t, policy.Request{Action: domain.Action{Type: domain.ActClick}, Node: button("Go")})
			},
			true,
		},
		{
			"already bound",
			func(t *testing.T) policy.AuthorizedAction {
				b, err := authorize(t, secretReq).BindSecret("first")
				if err != nil {
					t.Fatal(err)
				}
				return b
			},
			true,
		},
		{"zero value", func(*testing.T) policy.AuthorizedAction { return policy.AuthorizedAction{} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := tt.action(t)
			before := a.Text()
			b, err := a.BindSecret("hunter2!")
			if tt.wantErr {
				if !errors.Is(err, policy.ErrNotSecret) {
					t.Fatalf("BindSecret error = %v, want ErrNotSecret", err)
				}
				if b.Valid() {
					t.Error("a refused bind returned a valid action")
				}
				if a.Text() != before {
					t.Errorf("a refused bind changed the action's text to %q", a.Text())
				}
				return
			}
			if err != nil {
				t.Fatalf("BindSecret: %v", err)
			}
			if !b.Valid() || b.Text() != "hunter2!" || b.NeedsSecret() || b.SecretRef() != "bank_pw" {
				t.Errorf("bound: Valid=%v Text=%q NeedsSecret=%v SecretRef=%q", b.Valid(), b.Text(), b.NeedsSecret(), b.SecretRef())
			}
			// Binding widens nothing.
			if b.Type() != a.Type() || b.StepID() != a.StepID() || b.Node().Ref != a.Node().Ref ||
				b.Risk() != a.Risk() || b.Epoch() != a.Epoch() || b.Holder() != a.Holder() || b.Profile() != a.Profile() {
				t.Errorf("bound action differs from the authorized one: %+v vs %+v", b, a)
			}
			// The original is untouched: BindSecret returns a copy.
			if a.Text() != "" || !a.NeedsSecret() {
				t.Errorf("original after bind: Text=%q NeedsSecret=%v", a.Text(), a.NeedsSecret())
			}
			if _, err := b.BindSecret("again"); !errors.Is(err, policy.ErrNotSecret) {
				t.Errorf("second bind error = %v, want ErrNotSecret", err)
			}
		})
	}
}
