package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

const hash = "sha256:0f3a"

// button returns a resolved button node.
func button(name string) *domain.Node {
	return &domain.Node{Index: 3, Path: "/0.3", Role: "button", Name: name, Ref: "btn:" + name}
}

// mustEngine returns an engine for cfg or fails the test.
func mustEngine(tb testing.TB, cfg policy.Config) *policy.Engine {
	tb.Helper()
	e, err := policy.New(cfg)
	if err != nil {
		tb.Fatalf("policy.New(%+v): %v", cfg, err)
	}
	return e
}

// wantDenied fails unless err is a *policy.DeniedError with rule and code.
func wantDenied(tb testing.TB, err error, rule string, code domain.FailureCode) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("authorized, want denied by rule %q (%s)", rule, code)
	}
	var d *policy.DeniedError
	if !errors.As(err, &d) {
		tb.Fatalf("error %v (%T) is not a *policy.DeniedError", err, err)
	}
	if d.Rule != rule || d.Code != code {
		tb.Fatalf("denied by rule %q with %s (%v), want rule %q with %s", d.Rule, d.Code, err, rule, code)
	}
	if got := domain.ErrorCode(err); got != code {
		tb.Fatalf("domain.ErrorCode(%v) = %s, want %s", err, got, code)
	}
	if !policy.IsDenied(err) {
		tb.Fatalf("IsDenied(%v) = false", err)
	}
}

// consentTo is an operator's consent to acting on n at risk, or nil when
// ok is false.
func consentTo(ok bool, n *domain.Node, risk domain.Risk) *policy.Consent {
	if !ok {
		return nil
	}
	return &policy.Consent{By: "operator", Proposal: policy.Proposal{Action: "click", Role: n.Role, Name: n.Name, Risk: risk}}
}

// approved is an AUTOMATION config that may perform irreversible actions.
func approved() policy.Config {
	return policy.Config{
		Profile:           policy.ProfileAutomation,
		AllowIrreversible: true,
		ContentHash:       hash,
		Approval:          &policy.Approval{Capability: "bank.transfer@1.0.0", ContentHash: hash, Approver: "ops"},
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     policy.Config
		wantErr string
	}{
		{"automation", policy.Config{Profile: policy.ProfileAutomation}, ""},
		{"human", policy.Config{Profile: policy.ProfileHuman}, ""},
		{"discovery", policy.Config{Profile: policy.ProfileDiscovery}, ""},
		{"hosts and wildcard", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1", "bank.example", "*.corp.example"}}, ""},
		{"no profile", policy.Config{}, "unknown profile"},
		{"unknown profile", policy.Config{Profile: "ADMIN"}, "unknown profile"},
		{"lower-case profile", policy.Config{Profile: "automation"}, "unknown profile"},
		{"origins", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"https://bank.example", "http://127.0.0.1:8811/"}}, ""},
		{"empty domain", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"bank.example", ""}}, `allowed domain "": is empty`},
		{"host with port but no scheme", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1:8080"}}, "neither a host name nor scheme://host[:port]"},
		{"domain with path", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"bank.example/admin"}}, "neither a host name nor"},
		{"origin with path", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"https://bank.example/admin"}}, "no user, path, query or fragment"},
		{"origin with user", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"https://u@bank.example"}}, "no user, path, query or fragment"},
		{"ftp origin", policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"ftp://bank.example"}}, "scheme must be http or https"},
		{"bad entry origin", policy.Config{Profile: policy.ProfileAutomation, EntryOrigin: "file:///x"}, "entry origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := policy.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if e.Profile() != tt.cfg.Profile {
					t.Errorf("Profile() = %q, want %q", e.Profile(), tt.cfg.Profile)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New(%+v) error = %v, want one containing %q", tt.cfg, err, tt.wantErr)
			}
			if e != nil {
				t.Error("New returned an engine with its error")
			}
		})
	}
}

// TestAuthorizeProfileRiskMatrix runs every profile against every risk
// tier, with the step declaring the control's true risk.
func TestAuthorizeProfileRiskMatrix(t *testing.T) {
	t.Parallel()
	tiers := []struct {
		risk  domain.Risk
		label string
	}{
		{domain.RiskSafe, "Review transfer"},
		{domain.RiskElevated, "Open account"},
		{domain.RiskIrreversible, "Submit transfer"},
	}
	type want struct {
		rule string // "" = allowed
		code domain.FailureCode
	}
	allowed := want{}
	tests := []struct {
		name      string
		cfg       policy.Config
		confirmed bool
		want      [3]want // by tier: safe, elevated, irreversible
	}{
		{
			"automation without opt-in", policy.Config{Profile: policy.ProfileAutomation}, false,
			[3]want{allowed, allowed, {"allow_irreversible", domain.CodeApprovalRequired}},
		},
		{"automation approved", approved(), false, [3]want{allowed, allowed, allowed}},
		{
			"automation confirmation is not an approval", policy.Config{Profile: policy.ProfileAutomation}, true,
			[3]want{allowed, allowed, {"allow_irreversible", domain.CodeApprovalRequired}},
		},
		{
			"human unconfirmed", policy.Config{Profile: policy.ProfileHuman}, false,
			[3]want{allowed, allowed, {"confirm_irreversible", domain.CodeApprovalRequired}},
		},
		{"human confirmed", policy.Config{Profile: policy.ProfileHuman}, true, [3]want{allowed, allowed, allowed}},
		{
			"human approval does not replace confirmation", func() policy.Config { c := approved(); c.Profile = policy.ProfileHuman; return c }(), false,
			[3]want{allowed, allowed, {"confirm_irreversible", domain.CodeApprovalRequired}},
		},
		{
			"discovery without grant", policy.Config{Profile: policy.ProfileDiscovery}, false,
			[3]want{allowed, allowed, {"discovery_irreversible", domain.CodeApprovalRequired}},
		},
		{
			"discovery: a consumed approval or grant confirms one action", policy.Config{Profile: policy.ProfileDiscovery}, true,
			[3]want{allowed, allowed, allowed},
		},
		{"discovery with grant", policy.Config{Profile: policy.ProfileDiscovery, AllowIrreversible: true}, false, [3]want{allowed, allowed, allowed}},
	}
	for _, tt := range tests {
		for i, tier := range tiers {
			t.Run(tt.name+"/"+string(tier.risk), func(t *testing.T) {
				t.Parallel()
				e := mustEngine(t, tt.cfg)
				req := policy.Request{
					Action:  domain.Action{Type: domain.ActClick, StepID: "s1", Risk: tier.risk, Actor: domain.ActorAutomation},
					Node:    button(tier.label),
					Consent: consentTo(tt.confirmed, button(tier.label), tier.risk),
				}
				got, err := e.Authorize(req)
				w := tt.want[i]
				if w.rule != "" {
					wantDenied(t, err, w.rule, w.code)
					if got.Valid() {
						t.Error("a denied action came back valid")
					}
					return
				}
				if err != nil {
					t.Fatalf("Authorize: %v", err)
				}
				if !got.Valid() || got.Risk() != tier.risk || got.Profile() != tt.cfg.Profile {
					t.Errorf("authorized valid=%v risk=%q profile=%q, want risk %q profile %q",
						got.Valid(), got.Risk(), got.Profile(), tier.risk, tt.cfg.Profile)
				}
			})
		}
	}
}

func TestAuthorizeUndeclaredRisk(t *testing.T) {
	t.Parallel()
	link := &domain.Node{Role: "link", Name: "Submit transfer", Ref: "l1"}
	tests := []struct {
		name     string
		profile  policy.Profile
		declared domain.Risk
		node     *domain.Node
		wantRisk domain.Risk
		wantRule string
		wantCode domain.FailureCode
	}{
		{"declared safe, control elevated", policy.ProfileAutomation, domain.RiskSafe, button("Open account"), "", "undeclared_risk", domain.CodePolicyDenied},
		{"undeclared, control elevated", policy.ProfileAutomation, "", button("Save"), "", "undeclared_risk", domain.CodePolicyDenied},
		{"declared safe, control irreversible", policy.ProfileAutomation, domain.RiskSafe, button("Submit transfer"), "", "undeclared_risk", domain.CodePolicyDenied},
		{"declared elevated, control irreversible", policy.ProfileAutomation, domain.RiskElevated, button("Delete"), "", "undeclared_risk", domain.CodePolicyDenied},
		{"over-declared elevated", policy.ProfileAutomation, domain.RiskElevated, button("Go"), domain.RiskElevated, "", ""},
		{"over-declared irreversible still needs approval", policy.ProfileAutomation, domain.RiskIrreversible, button("Go"), "", "allow_irreversible", domain.CodeApprovalRequired},
		{"undeclared safe control", policy.ProfileAutomation, "", button("Go"), domain.RiskSafe, "", ""},
		{"link named like a transfer", policy.ProfileAutomation, domain.RiskSafe, link, domain.RiskSafe, "", ""},
		{"human is not held to declarations", policy.ProfileHuman, "", button("Open account"), domain.RiskElevated, "", ""},
		{"discovery is not held to declarations", policy.ProfileDiscovery, "", button("Open account"), domain.RiskElevated, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustEngine(t, policy.Config{Profile: tt.profile})
			got, err := e.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, StepID: "s", Risk: tt.declared}, Node: tt.node})
			if tt.wantRule != "" {
				wantDenied(t, err, tt.wantRule, tt.wantCode)
				return
			}
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if got.Risk() != tt.wantRisk {
				t.Errorf("Risk() = %q, want %q", got.Risk(), tt.wantRisk)
			}
		})
	}
}

func TestAuthorizeUndeclaredRiskMessageNamesStepAndControl(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileAutomation})
	_, err := e.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, StepID: "open"}, Node: button("Open account")})
	wantDenied(t, err, "undeclared_risk", domain.CodePolicyDenied)
	for _, s := range []string{`"open"`, `"Open account"`, "safe", "elevated"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not mention %s", err, s)
		}
	}
}

// TestAuthorizeUnknownDeclaredRiskFailsClosed: domain.Risk.Rank ranks an
// unknown tier highest "so it fails closed", but Authorize only applies the
// irreversible rules when the combined risk equals "irreversible" exactly.
func TestAuthorizeUnknownDeclaredRiskFailsClosed(t *testing.T) {
	t.Parallel()
	_ = (`fixed: policy.Authorize failed open on an unknown declared risk: a step declaring risk "bogus" on the ` +
		`button "Submit transfer" passes the undeclared_risk check (rank 3 > 2), MaxRisk returns "bogus", and the ` +
		`irreversible checks (AUTOMATION approval, HUMAN confirmation, DISCOVERY grant) compare risk == ` +
		`RiskIrreversible, so the action is authorized with no approval/confirmation/grant. Fix: refuse an unknown ` +
		`tier, or test risk.Rank() >= RiskIrreversible.Rank() (policy.go Authorize).`)
	for _, profile := range []policy.Profile{policy.ProfileAutomation, policy.ProfileHuman, policy.ProfileDiscovery} {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			e := mustEngine(t, policy.Config{Profile: profile})
			got, err := e.Authorize(policy.Request{
				Action: domain.Action{Type: domain.ActClick, StepID: "send", Risk: "bogus"},
				Node:   button("Submit transfer"),
			})
			if err == nil {
				t.Fatalf("authorized at risk %q with no approval, confirmation or grant", got.Risk())
			}
		})
	}
}

func TestAuthorizeIrreversibleNeedsOptInAndMatchingApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mutate   func(*policy.Config)
		wantRule string // "" = allowed
	}{
		{"opt-in and matching approval", func(*policy.Config) {}, ""},
		{"no opt-in", func(c *policy.Config) { c.AllowIrreversible = false }, "allow_irreversible"},
		{"no approval", func(c *policy.Config) { c.Approval = nil }, "approval"},
		{"approval of other content", func(c *policy.Config) { c.Approval.ContentHash = "sha256:other" }, "approval"},
		{"approval hash differs in case", func(c *policy.Config) { c.Approval.ContentHash = strings.ToUpper(hash) }, "approval"},
		{"no content hash", func(c *policy.Config) { c.ContentHash = "" }, "approval"},
		{"both hashes empty", func(c *policy.Config) { c.ContentHash, c.Approval.ContentHash = "", "" }, "approval"},
		{"no opt-in and no approval", func(c *policy.Config) { c.AllowIrreversible, c.Approval = false, nil }, "allow_irreversible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := approved()
			ap := *cfg.Approval
			cfg.Approval = &ap
			tt.mutate(&cfg)
			e := mustEngine(t, cfg)
			got, err := e.Authorize(policy.Request{
				Action: domain.Action{Type: domain.ActClick, StepID: "send", Risk: domain.RiskIrreversible},
				Node:   button("Submit transfer"),
			})
			if tt.wantRule != "" {
				wantDenied(t, err, tt.wantRule, domain.CodeApprovalRequired)
				return
			}
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if got.Risk() != domain.RiskIrreversible {
				t.Errorf("Risk() = %q", got.Risk())
			}
		})
	}
}

func TestAuthorizeApprovalIsNotNeededBelowIrreversible(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileAutomation, ContentHash: hash})
	for _, label := range []string{"Go", "Open account"} {
		risk := policy.NameRisk(label)
		if _, err := e.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, Risk: risk}, Node: button(label)}); err != nil {
			t.Errorf("%q (%s): %v", label, risk, err)
		}
	}
}

func TestAuthorizeHumanAndSecrets(t *testing.T) {
	t.Parallel()
	secret := &domain.ValueExpr{Secret: "bank_password"}
	field := &domain.Node{Role: "textbox", Name: "Password", Ref: "pw"}
	tests := []struct {
		name      string
		profile   policy.Profile
		confirmed bool
		wantRule  string
	}{
		{"human cannot type a secret", policy.ProfileHuman, false, "secret"},
		{"even confirmed", policy.ProfileHuman, true, "secret"},
		{"automation may", policy.ProfileAutomation, false, ""},
		{"discovery may", policy.ProfileDiscovery, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustEngine(t, policy.Config{Profile: tt.profile})
			got, err := e.Authorize(policy.Request{
				Action:  domain.Action{Type: domain.ActType, StepID: "pw", Value: secret},
				Node:    field,
				Consent: consentTo(tt.confirmed, field, domain.RiskSafe),
			})
			if tt.wantRule != "" {
				wantDenied(t, err, tt.wantRule, domain.CodePolicyDenied)
				return
			}
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if !got.NeedsSecret() || got.SecretRef() != "bank_password" || got.Text() != "" {
				t.Errorf("NeedsSecret=%v SecretRef=%q Text=%q", got.NeedsSecret(), got.SecretRef(), got.Text())
			}
		})
	}
}

func TestAuthorizeHumanLiteralText(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileHuman})
	got, err := e.Authorize(policy.Request{
		Action: domain.Action{Type: domain.ActType, Value: domain.Lit("alice"), Actor: domain.ActorHuman},
		Node:   &domain.Node{Role: "textbox", Name: "User", Ref: "u"},
		Text:   "alice",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text() != "alice" || got.NeedsSecret() || got.Actor() != domain.ActorHuman {
		t.Errorf("Text=%q NeedsSecret=%v Actor=%q", got.Text(), got.NeedsSecret(), got.Actor())
	}
}

func TestAuthorizeStructuralRules(t *testing.T) {
	t.Parallel()
	field := &domain.Node{Role: "textbox", Name: "Amount", Ref: "amt"}
	tests := []struct {
		name     string
		allowed  []domain.ActionType
		action   domain.Action
		node     *domain.Node
		wantRule string
	}{
		{"no type", nil, domain.Action{}, button("Go"), "action"},
		{"click without node", nil, domain.Action{Type: domain.ActClick}, nil, "target"},
		{"type without node", nil, domain.Action{Type: domain.ActType}, nil, "target"},
		{"select without node", nil, domain.Action{Type: domain.ActSelect}, nil, "target"},
		{"extract without node", nil, domain.Action{Type: domain.ActExtract}, nil, "target"},
		{"press key without node", nil, domain.Action{Type: domain.ActPressKey, Key: "Enter"}, nil, ""},
		{"reload without node", nil, domain.Action{Type: domain.ActReload}, nil, ""},
		{"wait without node", nil, domain.Action{Type: domain.ActWaitFor}, nil, ""},
		{"empty allowed_actions allows all", nil, domain.Action{Type: domain.ActType}, field, ""},
		{"listed action", []domain.ActionType{domain.ActClick, domain.ActType}, domain.Action{Type: domain.ActType}, field, ""},
		{"unlisted action", []domain.ActionType{domain.ActClick}, domain.Action{Type: domain.ActType}, field, "allowed_actions"},
		{"unlisted navigate", []domain.ActionType{domain.ActClick}, domain.Action{Type: domain.ActNavigate, URL: "http://127.0.0.1/"}, nil, "allowed_actions"},
		{"unlisted raw input", []domain.ActionType{domain.ActClick}, domain.Action{Type: domain.ActRawInput}, nil, "allowed_actions"},
		{"allowed_actions judged before target", []domain.ActionType{domain.ActClick}, domain.Action{Type: domain.ActType}, nil, "allowed_actions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustEngine(t, policy.Config{Profile: policy.ProfileAutomation, AllowedActions: tt.allowed, AllowedDomains: []string{"127.0.0.1"}})
			got, err := e.Authorize(policy.Request{Action: tt.action, Node: tt.node})
			if tt.wantRule != "" {
				wantDenied(t, err, tt.wantRule, domain.CodePolicyDenied)
				return
			}
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if !got.Valid() {
				t.Error("authorized action is not valid")
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{
		Profile:        policy.ProfileAutomation,
		AllowedDomains: []string{"127.0.0.1", "Bank.Example", "*.corp.example"},
	})
	tests := []struct {
		name string
		url  string
		ok   bool
	}{
		{"exact host", "http://bank.example/", true},
		{"https", "https://bank.example/login?x=1#top", true},
		{"allowlist entry is case-insensitive", "http://bank.example/", true},
		{"upper-case host", "http://BANK.EXAMPLE/x", true},
		{"upper-case scheme", "HTTPS://bank.example/", true},
		{"ip with port", "http://127.0.0.1:8080/app", true},
		{"host with port", "https://bank.example:8443/", true},
		{"wildcard one level", "https://app.corp.example/", true},
		{"wildcard two levels", "https://a.b.corp.example/", true},
		{"wildcard with port", "http://app.corp.example:3000/", true},
		{"about:blank", "about:blank", true},
		{"credentials before the real host", "http://user:pw@bank.example/", true},

		{"subdomain of an exact entry", "http://www.bank.example/", false},
		{"wildcard does not match its apex", "http://corp.example/", false},
		{"suffix without a dot", "http://evilcorp.example/", false},
		{"allowed name as a label of another host", "http://bank.example.evil.example/", false},
		{"allowed name in the path", "http://evil.example/bank.example", false},
		{"allowed ip as userinfo", "http://127.0.0.1@evil.example/", false},
		{"allowed host as userinfo", "http://bank.example@evil.example/", false},
		{"allowed host and port as userinfo", "http://bank.example:80@evil.example/", false},
		{"allowed host after a fragment", "http://evil.example#@bank.example/", false},
		{"allowed host after a query", "http://evil.example?@bank.example/", false},
		{"backslash userinfo", `http://evil.example\@bank.example/`, false},
		{"trailing dot", "http://bank.example./", false},
		{"other ip", "http://127.0.0.2/", false},
		{"ipv6 loopback", "http://[::1]/", false},
		{"javascript", "javascript:alert(document.domain)", false},
		{"javascript with a host-like body", "javascript://bank.example/%0aalert(1)", false},
		{"file", "file:///etc/passwd", false},
		{"file with an allowed host", "file://bank.example/etc/passwd", false},
		{"ftp", "ftp://bank.example/", false},
		{"websocket", "ws://bank.example/", false},
		{"data", "data:text/html,<script>alert(1)</script>", false},
		{"about other than blank", "about:srcdoc", false},
		{"about blank upper case", "ABOUT:BLANK", false},
		{"scheme-relative", "//bank.example/", false},
		{"relative path", "/login", false},
		{"bare host", "bank.example", false},
		{"empty", "", false},
		{"unparseable", "http://[bank.example/", false},
		{"control character", "http://bank.example/\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := e.CheckURL(tt.url)
			if tt.ok {
				if err != nil {
					t.Errorf("CheckURL(%q): %v", tt.url, err)
				}
				return
			}
			wantDenied(t, err, "allowed_domains", domain.CodeDomainNotAllowed)
		})
	}
}

func TestCheckURLEmptyAllowlist(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileDiscovery})
	if err := e.CheckURL("about:blank"); err != nil {
		t.Errorf("about:blank: %v", err)
	}
	for _, u := range []string{"http://127.0.0.1/", "http://localhost/", "https://bank.example/"} {
		wantDenied(t, e.CheckURL(u), "allowed_domains", domain.CodeDomainNotAllowed)
	}
}

func TestAuthorizeNavigate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		profile policy.Profile
		url     string
		ok      bool
	}{
		{"automation allowed", policy.ProfileAutomation, "http://127.0.0.1:9000/login", true},
		{"automation off the list", policy.ProfileAutomation, "https://evil.example/", false},
		{"automation userinfo trick", policy.ProfileAutomation, "http://127.0.0.1@evil.example/", false},
		{"human off the list", policy.ProfileHuman, "https://evil.example/", false},
		{"discovery off the list", policy.ProfileDiscovery, "https://evil.example/", false},
		{"discovery javascript", policy.ProfileDiscovery, "javascript:alert(1)", false},
		{"empty URL", policy.ProfileAutomation, "", false},
		{"about:blank", policy.ProfileAutomation, "about:blank", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustEngine(t, policy.Config{Profile: tt.profile, AllowedDomains: []string{"127.0.0.1"}})
			got, err := e.Authorize(policy.Request{Action: domain.Action{Type: domain.ActNavigate, URL: tt.url}})
			if !tt.ok {
				wantDenied(t, err, "allowed_domains", domain.CodeDomainNotAllowed)
				return
			}
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if got.URL() != tt.url || got.Node() != nil || got.Risk() != domain.RiskSafe {
				t.Errorf("URL=%q Node=%v Risk=%q", got.URL(), got.Node(), got.Risk())
			}
		})
	}
}

func TestDeniedError(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileAutomation})
	_, err := e.Authorize(policy.Request{Action: domain.Action{Type: domain.ActNavigate, URL: "https://evil.example/"}})
	wantDenied(t, err, "allowed_domains", domain.CodeDomainNotAllowed)
	if !strings.HasPrefix(err.Error(), "policy denied (allowed_domains): ") {
		t.Errorf("Error() = %q", err)
	}

	tests := []struct {
		name       string
		err        error
		wantDenied bool
		wantCode   domain.FailureCode
	}{
		{"denied", err, true, domain.CodeDomainNotAllowed},
		{"wrapped", fmt.Errorf("step nav: %w", err), true, domain.CodeDomainNotAllowed},
		{"wrapped in a domain error", domain.Wrap(domain.CodeUnexpectedState, err, "x"), true, domain.CodeUnexpectedState},
		{"joined", errors.Join(errors.New("x"), err), true, domain.CodeDomainNotAllowed},
		{"literal", &policy.DeniedError{Rule: "r", Code: domain.CodeApprovalRequired, Message: "m"}, true, domain.CodeApprovalRequired},
		{"nil", nil, false, ""},
		{"domain error", domain.Errorf(domain.CodePolicyDenied, "not from policy"), false, domain.CodePolicyDenied},
		{"foreign", errors.New("policy denied (x): y"), false, domain.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := policy.IsDenied(tt.err); got != tt.wantDenied {
				t.Errorf("IsDenied = %v, want %v", got, tt.wantDenied)
			}
			if got := domain.ErrorCode(tt.err); got != tt.wantCode {
				t.Errorf("ErrorCode = %q, want %q", got, tt.wantCode)
			}
		})
	}

	var de *domain.Error
	d := &policy.DeniedError{Rule: "approval", Code: domain.CodeApprovalRequired, Message: "no approval record"}
	if !errors.As(d, &de) || de.Code != domain.CodeApprovalRequired || de.Message != "no approval record" {
		t.Errorf("Unwrap = %+v", de)
	}
}

func TestEngineConcurrentUse(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, approved())
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			label := []string{"Go", "Open account", "Submit transfer"}[i%3]
			a, err := e.Authorize(policy.Request{
				Action: domain.Action{Type: domain.ActClick, Risk: policy.NameRisk(label)},
				Node:   button(label), Epoch: uint64(i),
			})
			if err == nil && a.Epoch() != uint64(i) {
				err = fmt.Errorf("epoch %d, want %d", a.Epoch(), i)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestCheckURLOrigins: a bare host means the entrypoint's scheme and port
// only; an origin entry names its own; a sub-capability's engine also needs
// its caller's allowlist to agree (issue 9: the sign-on typed a password
// into another port on 127.0.0.1).
func TestCheckURLOrigins(t *testing.T) {
	t.Parallel()
	bare, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1", "localhost"}, EntryOrigin: "http://127.0.0.1:8811"})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"http://127.0.0.1:9000", "https://bank.example"}, EntryOrigin: "http://127.0.0.1:8811"})
	if err != nil {
		t.Fatal(err)
	}
	child, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1", "http://127.0.0.1:9000"}, EntryOrigin: "http://127.0.0.1:8811", Parent: bare})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		e    *policy.Engine
		url  string
		ok   bool
	}{
		{"bare host, entry port", bare, "http://127.0.0.1:8811/content/search", true},
		{"bare host, other host same port", bare, "http://localhost:8811/", true},
		{"bare host, other port", bare, "http://127.0.0.1:9000/", false},
		{"bare host, other scheme", bare, "https://127.0.0.1:8811/", false},
		{"explicit origin", explicit, "http://127.0.0.1:9000/x", true},
		{"explicit origin, entry port not listed", explicit, "http://127.0.0.1:8811/", false},
		{"explicit https default port", explicit, "https://bank.example/a", true},
		{"explicit https, other port", explicit, "https://bank.example:8443/a", false},
		{"child within parent", child, "http://127.0.0.1:8811/", true},
		{"child allows what parent does not", child, "http://127.0.0.1:9000/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.e.CheckURL(tt.url)
			if tt.ok && err != nil {
				t.Errorf("CheckURL(%q): %v", tt.url, err)
			}
			if !tt.ok {
				wantDenied(t, err, "allowed_domains", domain.CodeDomainNotAllowed)
			}
		})
	}
}

func TestCanAuthorizeIrreversible(t *testing.T) {
	t.Parallel()
	hash := "sha256:" + strings.Repeat("a", 64)
	ap := &policy.Approval{Capability: "x@1.0.0", ContentHash: hash, Approver: "ops"}
	tests := []struct {
		name string
		cfg  policy.Config
		ok   bool
	}{
		{"no opt-in", policy.Config{Profile: policy.ProfileAutomation, ContentHash: hash, Approval: ap}, false},
		{"no approval", policy.Config{Profile: policy.ProfileAutomation, ContentHash: hash, AllowIrreversible: true}, false},
		{"other hash", policy.Config{Profile: policy.ProfileAutomation, ContentHash: "sha256:" + strings.Repeat("b", 64), AllowIrreversible: true, Approval: ap}, false},
		{"approved", policy.Config{Profile: policy.ProfileAutomation, ContentHash: hash, AllowIrreversible: true, Approval: ap}, true},
		{"human confirms each", policy.Config{Profile: policy.ProfileHuman}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := policy.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = e.CanAuthorizeIrreversible()
			if tt.ok != (err == nil) {
				t.Fatalf("CanAuthorizeIrreversible() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && domain.ErrorCode(err) != domain.CodeApprovalRequired {
				t.Fatalf("code %s, want %s", domain.ErrorCode(err), domain.CodeApprovalRequired)
			}
		})
	}
}
