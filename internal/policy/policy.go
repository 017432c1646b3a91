// Package policy is the single chokepoint every action passes before it
// reaches a surface, and the only package that decides whether an action is
// allowed. It owns the profiles (AUTOMATION, HUMAN, DISCOVERY), the risk
// tiers, the name lexicon and the risk an action implies beyond its node,
// the domain allowlist, the autonomy levels 0-4, grants (and spending their
// uses), consents and capability approvals; it is the only maker of
// AuthorizedAction (DESIGN invariant 2).
//
// policy never performs I/O, never asks a person anything (callers ask and
// hand policy the Consent), and never trusts a caller's claim that an action
// was confirmed: the grant or consent itself travels in the Request.
package policy

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/cuahq/cua/internal/domain"
)

// Profile selects the rules an action is judged by.
type Profile string

// Profiles.
const (
	ProfileAutomation Profile = "AUTOMATION"
	ProfileHuman      Profile = "HUMAN"
	ProfileDiscovery  Profile = "DISCOVERY"
)

// Approval is a human's sign-off on one exact capability content.
type Approval struct {
	Capability  string `json:"capability"`
	ContentHash string `json:"content_hash"`
	Approver    string `json:"approver"`
	ApprovedAt  string `json:"approved_at"`
	Note        string `json:"note,omitempty"`
}

// Config configures an Engine.
type Config struct {
	Profile Profile
	// AllowedDomains lists the origins navigation may reach: a host name
	// ("127.0.0.1", "bank.example", "*.bank.example"), which means that host
	// on EntryOrigin's scheme and port only, or an origin with a scheme and
	// port ("http://127.0.0.1:8811"). Empty denies every navigation.
	AllowedDomains []string
	// EntryOrigin is the run's base origin (scheme://host[:port]); a bare
	// host in AllowedDomains takes its scheme and port. Empty lets a bare host
	// match any scheme and port (discovery, which starts from its target).
	EntryOrigin string
	// Parent, when set, must also allow every URL: a capability run in
	// place inherits its caller's allowlist intersected with its own.
	Parent *Engine
	// AllowedActions limits action types; empty allows all.
	AllowedActions []domain.ActionType
	// AllowIrreversible is the caller's opt-in to irreversible actions;
	// under DISCOVERY it delegates them for the run (--sovereign) at any
	// autonomy level that acts.
	AllowIrreversible bool
	// ContentHash is the recomputed hash of the capability being run.
	ContentHash string
	// Approval is the approval record presented for irreversible actions.
	Approval *Approval
	// Autonomy is a DISCOVERY run's level; it applies to requests that
	// carry a Proposal (the actions a model proposed).
	Autonomy Level
}

// Engine authorizes actions under one configuration. It is safe for
// concurrent use.
type Engine struct {
	cfg     Config
	entry   origin
	allowed []origin
}

// New validates cfg and returns an Engine.
func New(cfg Config) (*Engine, error) {
	switch cfg.Profile {
	case ProfileAutomation, ProfileHuman, ProfileDiscovery:
	default:
		return nil, fmt.Errorf("policy: unknown profile %q", cfg.Profile)
	}
	if !cfg.Autonomy.Valid() {
		return nil, fmt.Errorf("policy: autonomy: %d is not a level 0-4", cfg.Autonomy)
	}
	e := &Engine{cfg: cfg}
	if cfg.EntryOrigin != "" {
		o, err := parseOrigin(cfg.EntryOrigin)
		if err != nil || o.host == "" {
			return nil, fmt.Errorf("policy: entry origin %q is not scheme://host[:port]", cfg.EntryOrigin)
		}
		e.entry = o
	}
	for _, d := range cfg.AllowedDomains {
		o, err := parseAllowed(d)
		if err != nil {
			return nil, fmt.Errorf("policy: allowed domain %q: %w", d, err)
		}
		e.allowed = append(e.allowed, o)
	}
	return e, nil
}

// Profile returns the engine's profile.
func (e *Engine) Profile() Profile { return e.cfg.Profile }

// Request is an action resolved to a node and waiting for authorization.
type Request struct {
	Action domain.Action
	// Node is the resolved target, nil for untargeted actions.
	Node *domain.Node
	// Text is the resolved non-secret value to type or select.
	Text string
	// Epoch and Holder identify the lease the action runs under.
	Epoch  uint64
	Holder string
	// Snapshot is the screen the action was resolved on; policy reads from
	// it the risk of what the action sets off beyond its node (ImpliedRisk:
	// Enter in a form field submits the form). Nil implies nothing.
	Snapshot *domain.UiSnapshot
	// Proposal, under DISCOVERY, is the action as a model proposed it: the
	// engine's autonomy level applies to it.
	Proposal *Proposal
	// Consent is a person's yes to exactly this action (the operator's
	// confirmation under HUMAN, an approver's under DISCOVERY).
	Consent *Consent
	// Grants are the run's grants; when a grant is what allows an
	// irreversible DISCOVERY action, Authorize spends one of its uses.
	Grants *Grants
}

// DeniedError is returned when policy refuses an action.
type DeniedError struct {
	Rule    string
	Code    domain.FailureCode
	Message string
}

func (e *DeniedError) Error() string { return "policy denied (" + e.Rule + "): " + e.Message }

// Unwrap exposes the failure code as a *domain.Error.
func (e *DeniedError) Unwrap() error { return &domain.Error{Code: e.Code, Message: e.Message} }

// IsDenied reports whether err is or wraps a *DeniedError.
func IsDenied(err error) bool {
	var d *DeniedError
	return errors.As(err, &d)
}

func deny(rule string, code domain.FailureCode, format string, args ...any) error {
	return &DeniedError{Rule: rule, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Authorize judges req and returns the token a surface requires.
func (e *Engine) Authorize(req Request) (AuthorizedAction, error) {
	a := req.Action
	if a.Type == "" {
		return AuthorizedAction{}, deny("action", domain.CodePolicyDenied, "action has no type")
	}
	if len(e.cfg.AllowedActions) > 0 && !slices.Contains(e.cfg.AllowedActions, a.Type) {
		return AuthorizedAction{}, deny("allowed_actions", domain.CodePolicyDenied, "action %s is not in the capability's allowed_actions", a.Type)
	}
	if a.Type.NeedsTarget() && req.Node == nil {
		return AuthorizedAction{}, deny("target", domain.CodePolicyDenied, "%s needs a resolved target", a.Type)
	}
	if a.Type == domain.ActNavigate {
		if err := e.CheckURL(a.URL); err != nil {
			return AuthorizedAction{}, err
		}
	}
	if a.Value.IsSecret() && e.cfg.Profile == ProfileHuman {
		return AuthorizedAction{}, deny("secret", domain.CodePolicyDenied, "a human action cannot type a secret reference")
	}
	switch a.Risk {
	case "", domain.RiskSafe, domain.RiskElevated, domain.RiskIrreversible:
	default:
		return AuthorizedAction{}, deny("risk", domain.CodePolicyDenied, "step %q declares an unknown risk tier %q", a.StepID, a.Risk)
	}
	computed, by := actionRisk(req.Snapshot, a, req.Node)
	risk := domain.MaxRisk(computed, a.Risk)
	switch e.cfg.Profile {
	case ProfileAutomation:
		if computed.Rank() > a.Risk.Rank() {
			if by != nil && by != req.Node {
				return AuthorizedAction{}, deny("undeclared_risk", domain.CodePolicyDenied,
					"step %q declares %s but the %s reaches %s, which is %s", a.StepID, orSafe(a.Risk), a.Type, describe(by), computed)
			}
			return AuthorizedAction{}, deny("undeclared_risk", domain.CodePolicyDenied,
				"step %q declares %s but the control %q is %s", a.StepID, orSafe(a.Risk), nodeName(req.Node), computed)
		}
		if risk == domain.RiskIrreversible {
			if err := e.checkIrreversible(); err != nil {
				return AuthorizedAction{}, err
			}
		}
	case ProfileHuman:
		if risk == domain.RiskIrreversible && !req.Consent.covers(req.Node, risk) {
			return AuthorizedAction{}, deny("confirm_irreversible", domain.CodeApprovalRequired,
				"the control %q is irreversible: the operator must confirm it", nodeName(req.Node))
		}
	case ProfileDiscovery:
		if err := e.discovery(req, risk); err != nil {
			return AuthorizedAction{}, err
		}
	}
	out := AuthorizedAction{
		valid:   true,
		action:  a,
		risk:    risk,
		ceiling: e.ceiling(req, risk),
		profile: e.cfg.Profile,
		epoch:   req.Epoch,
		holder:  req.Holder,
	}
	if req.Node != nil {
		n := *req.Node
		n.Children = slices.Clone(n.Children)
		out.node = &n
	}
	if a.Value.IsSecret() {
		out.secret = a.Value.Secret
	} else {
		out.text = req.Text
	}
	return out, nil
}

// ceiling is the highest risk a control an authorized action reaches beyond
// what Authorize saw may carry (AuthorizedAction.Admits): the action's own
// risk, or under HUMAN and DISCOVERY a higher tier that this request would
// have been authorized at without a consent, a grant or an approval (those
// name one control, never another the action happens to reach). Under
// AUTOMATION the step's declaration is the contract: nothing above it.
func (e *Engine) ceiling(req Request, risk domain.Risk) domain.Risk {
	free := func(t domain.Risk) bool {
		switch e.cfg.Profile {
		case ProfileHuman:
			return t != domain.RiskIrreversible
		case ProfileDiscovery:
			delegated := t == domain.RiskIrreversible && e.delegated()
			if req.Proposal != nil && e.cfg.Autonomy.needsConsent(t) && !delegated {
				return false
			}
			return t != domain.RiskIrreversible || delegated
		}
		return false
	}
	for _, t := range []domain.Risk{domain.RiskIrreversible, domain.RiskElevated} {
		if t.Rank() <= risk.Rank() {
			break
		}
		if free(t) {
			return t
		}
	}
	return orSafe(risk)
}

// CanAuthorizeIrreversible reports, before anything runs, whether an
// irreversible action could be authorized under this configuration (the
// caller opted in and holds an approval of this exact content). It returns
// the denial the action would meet otherwise.
func (e *Engine) CanAuthorizeIrreversible() error {
	if e.cfg.Profile != ProfileAutomation {
		return nil
	}
	return e.checkIrreversible()
}

func (e *Engine) checkIrreversible() error {
	if !e.cfg.AllowIrreversible {
		return deny("allow_irreversible", domain.CodeApprovalRequired,
			"irreversible action refused: the caller did not pass --allow-irreversible")
	}
	ap := e.cfg.Approval
	if ap == nil {
		return deny("approval", domain.CodeApprovalRequired, "irreversible action refused: no approval record")
	}
	if e.cfg.ContentHash == "" || ap.ContentHash != e.cfg.ContentHash {
		return deny("approval", domain.CodeApprovalRequired,
			"irreversible action refused: approval covers %s, capability content is %s", ap.ContentHash, e.cfg.ContentHash)
	}
	return nil
}

// CheckURL applies the domain allowlist to a navigation target or a landed
// URL. about:blank is always allowed.
func (e *Engine) CheckURL(raw string) error {
	if raw == "about:blank" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return deny("allowed_domains", domain.CodeDomainNotAllowed, "URL %q has no host", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return deny("allowed_domains", domain.CodeDomainNotAllowed, "URL scheme %q is not allowed", u.Scheme)
	}
	got := originOf(u)
	ok := false
	for _, a := range e.allowed {
		if a.allows(got, e.entry) {
			ok = true
			break
		}
	}
	if !ok {
		return deny("allowed_domains", domain.CodeDomainNotAllowed, "%s is not in the allowed domains", got)
	}
	if e.cfg.Parent != nil {
		if err := e.cfg.Parent.CheckURL(raw); err != nil {
			var d *DeniedError
			if errors.As(err, &d) {
				d.Message += " of the calling capability"
			}
			return err
		}
	}
	return nil
}

func orSafe(r domain.Risk) domain.Risk {
	if r == "" {
		return domain.RiskSafe
	}
	return r
}

func nodeName(n *domain.Node) string {
	if n == nil {
		return ""
	}
	return n.Name
}
