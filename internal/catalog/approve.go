package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
)

// MinEvalRuns is how many successful eval replays of exactly one content
// hash, with no unauthorized dispatch, ApproveParams.FromEval requires.
const MinEvalRuns = 5

// ApproveParams is one approval of a version for unattended use.
type ApproveParams struct {
	// FromEval requires MinEvalRuns successful eval replays of exactly the
	// version's content hash recorded in the store. A standing approval
	// must set it; a one-off approval (Once) binds exact inputs a human
	// read and may omit it.
	FromEval bool
	// Max, Allowed and Pattern bound the inputs a standing approval covers;
	// every name must be an input of the capability.
	Max     map[string]string
	Allowed map[string][]string
	Pattern map[string]string
	// Expires, when positive, ends the approval that long after now.
	Expires time.Duration
	Note    string
	// Approver is the String form of the principal approving (see
	// principal.CheckString); it defaults to Config.User. Anything else is
	// refused, so no free text reaches the approvals table.
	Approver string
	// Once makes a one-off approval of exactly Inputs, consumed by the first
	// run that uses it.
	Once   bool
	Inputs map[string]string
	// InputsSchema is a JSON Schema the run's inputs (one object, money and
	// numbers as JSON numbers) must satisfy, beside the other bounds.
	InputsSchema json.RawMessage
	// AcceptUnarmed, the approver's reason, accepts a capability that reads
	// outputs from a screen showing a record with no check that it is the
	// record asked for and does not declare identity: unarmed (DESIGN
	// invariant 23). Approve refuses such a capability without it, and
	// refuses it for a capability with nothing unarmed to accept.
	AcceptUnarmed string
	// AcceptScreenOnly, the approver's reason, accepts a capability with an
	// irreversible write no effect contract covers (see
	// capability.ScreenOnlyWrites). Approve refuses such a capability
	// without it, and refuses it for a capability with nothing to accept.
	AcceptScreenOnly string
}

// unarmedNotePrefix starts the part of an approval's note that records an
// accepted unarmed read.
const unarmedNotePrefix = "identity unarmed: "

// Approve records an approval of the version ref names. It refuses a
// tampered or draft version, bounds or inputs that name no input of the
// capability or cannot be evaluated, a FromEval approval without
// MinEvalRuns successful eval runs, and a standing approval without
// FromEval. Nothing is written when it refuses.
func (c *Catalog) Approve(ctx context.Context, ref string, p ApproveParams) (store.Approval, error) {
	l, v, err := c.Resolve(ctx, ref)
	if err != nil {
		return store.Approval{}, err
	}
	a := store.Approval{ID: c.newID(), CapabilityID: v.CapabilityID, Version: v.Version, ContentHash: v.ContentHash,
		Approver: p.Approver, Note: p.Note, CreatedAt: c.now(), Once: p.Once,
		Bounds: store.Bounds{Max: p.Max, Allowed: p.Allowed, Pattern: p.Pattern, InputsSchema: p.InputsSchema}}
	if a.Approver == "" {
		if a.Approver = c.user(); a.Approver == "" {
			return store.Approval{}, errors.New("approver: no principal is known (set CUA_PRINCIPAL_TOKEN)")
		}
	}
	if err := principal.CheckString(a.Approver); err != nil {
		return store.Approval{}, fmt.Errorf("approver: %w", err)
	}
	if p.Expires < 0 {
		return store.Approval{}, fmt.Errorf("expires: %s is negative", p.Expires)
	} else if p.Expires > 0 {
		a.ExpiresAt = a.CreatedAt.Add(p.Expires)
	}
	if err := c.checkApproval(l.Capability, p); err != nil {
		return store.Approval{}, fmt.Errorf("approve %s: %w", v.Ref(), err)
	}
	if a.Note, err = identityNote(l.Capability, p); err != nil {
		return store.Approval{}, fmt.Errorf("approve %s: %w", v.Ref(), err)
	}
	if a.Note, err = screenOnlyNote(l.Capability, p.AcceptScreenOnly, a.Note); err != nil {
		return store.Approval{}, fmt.Errorf("approve %s: %w", v.Ref(), err)
	}
	if p.Once {
		if a.Inputs, err = exactInputs(l.Capability, p.Inputs); err != nil {
			return store.Approval{}, fmt.Errorf("approve %s: inputs: %w", v.Ref(), err)
		}
	}
	if p.FromEval {
		n, err := c.st.CountEvalSuccesses(ctx, v.ContentHash)
		if err != nil {
			return store.Approval{}, err
		}
		if n < MinEvalRuns {
			return store.Approval{}, fmt.Errorf("approve %s --from-eval: %d successful eval replay(s) of %s with no unauthorized dispatch, %d required (cua replay %s --eval)",
				v.Ref(), n, v.ContentHash, MinEvalRuns, v.Ref())
		}
	}
	return c.st.AddApproval(ctx, a)
}

func (c *Catalog) checkApproval(cp *domain.Capability, p ApproveParams) error {
	switch {
	case !p.Once && !p.FromEval:
		return errors.New("a standing approval needs --from-eval (or approve one exact use with --once --input ...)")
	case p.Once && (len(p.Max) > 0 || len(p.Allowed) > 0 || len(p.Pattern) > 0):
		return errors.New("a one-off approval binds exact --input values; --max, --allowed and --pattern do not apply")
	case !p.Once && len(p.Inputs) > 0:
		return errors.New("--input binds a one-off approval: add --once")
	case p.Once && len(p.InputsSchema) > 0:
		return errors.New("a one-off approval binds exact --input values; --inputs-schema does not apply")
	}
	if len(p.InputsSchema) > 0 {
		if _, err := compileInputsSchema(p.InputsSchema); err != nil {
			return err
		}
	}
	for _, kind := range []struct {
		flag  string
		names []string
	}{{"max", keys(p.Max)}, {"allowed", keys(p.Allowed)}, {"pattern", keys(p.Pattern)}} {
		for _, n := range kind.names {
			if cp.Input(n) == nil {
				return fmt.Errorf("%s.%s: %s has no input %q", kind.flag, n, cp.Ref(), n)
			}
		}
	}
	return policy.InputBounds{Max: p.Max, Allowed: p.Allowed, Pattern: p.Pattern}.Validate()
}

// identityNote returns the approval's note, recording an unarmed read the
// approval accepts (invariant 23): the reason the capability declares
// (identity: unarmed) or the approver's --accept-unarmed reason. It
// refuses a capability with an undeclared unarmed read unless the approver
// accepts it, and an acceptance of a capability that has none.
func identityNote(cp *domain.Capability, p ApproveParams) (string, error) {
	accept := strings.TrimSpace(p.AcceptUnarmed)
	if p.AcceptUnarmed != "" && accept == "" {
		return "", errors.New("--accept-unarmed needs a reason")
	}
	declared := capability.IdentityUnarmed(cp)
	reads := capability.UnarmedReads(cp)
	var why string
	switch {
	case len(reads) > 0 && accept == "":
		names := make([]string, len(reads))
		for i, r := range reads {
			names[i] = fmt.Sprintf("%s (step %s)", r.Output, r.Step)
		}
		return "", fmt.Errorf("%s reads %s from a screen showing a record with no check that it is the record asked for: "+
			"add a predicate with {input.NAME} to the reading step's postcondition or the checkpoint, declare identity: {unarmed: REASON}, "+
			"or accept it with --accept-unarmed REASON", cp.Ref(), strings.Join(names, ", "))
	case len(reads) > 0:
		why = unarmedNotePrefix + "accepted: " + accept
	case declared != "" && accept != "":
		why = unarmedNotePrefix + "declared: " + declared + "; accepted: " + accept
	case declared != "":
		why = unarmedNotePrefix + "declared: " + declared
	case accept != "":
		return "", fmt.Errorf("--accept-unarmed: %s checks the identity of every record it reads; there is nothing to accept", cp.Ref())
	default:
		return p.Note, nil
	}
	if p.Note == "" {
		return why, nil
	}
	return p.Note + "; " + why, nil
}

// exactInputs binds raw through the capability's input specs and returns
// every bound input as text, as the bounds checker compares it.
func exactInputs(cp *domain.Capability, raw map[string]string) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, errors.New("a one-off approval needs the exact inputs (--input NAME=VALUE ...)")
	}
	bound, err := capability.BindInputs(cp, raw)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(bound))
	for k, v := range bound {
		out[k] = text(v)
	}
	return out, nil
}

// text formats a bound input as the bounds checker reads it.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return big.NewFloat(x).Text('f', -1)
	}
	return fmt.Sprint(v)
}

// Revoke revokes the approval id as Config.User; see RevokeBy.
func (c *Catalog) Revoke(ctx context.Context, id string) (store.Approval, error) {
	return c.RevokeBy(ctx, id, c.user())
}

// RevokeBy revokes the approval id, recording the principal by (its String
// form, see principal.CheckString; anything else is refused); revoking
// twice keeps the first time and the first revoker.
func (c *Catalog) RevokeBy(ctx context.Context, id, by string) (store.Approval, error) {
	if id == "" {
		return store.Approval{}, errors.New("approval id is empty")
	}
	if by == "" {
		return store.Approval{}, errors.New("revoked by: no principal is known (set CUA_PRINCIPAL_TOKEN)")
	}
	if err := principal.CheckString(by); err != nil {
		return store.Approval{}, fmt.Errorf("revoked by: %w", err)
	}
	a, err := c.st.RevokeApproval(ctx, id, by)
	if errors.Is(err, store.ErrNotFound) {
		return a, &store.NotFoundError{What: "approval " + id, Reason: "no such approval in the catalog", Fix: "cua catalog show REF lists a version's approvals"}
	}
	return a, err
}

// Authorize finds an active approval of exactly l's content hash that
// covers inputs (bound by capability.BindInputs) at the catalog's clock: not
// revoked, not expired, inputs inside its bounds, and for a one-off
// approval the exact inputs, which it then consumes for runID atomically
// (of two runs racing for one one-off approval, one wins). A standing
// approval is preferred to consuming a one-off one. It refuses with a
// domain APPROVAL_REQUIRED error saying why no approval applies. Callers
// run it before a surface opens.
func (c *Catalog) Authorize(ctx context.Context, l *capability.Loaded, inputs map[string]any, runID string) (store.Approval, error) {
	cp := l.Capability
	all, err := c.st.ListApprovals(ctx, store.ApprovalFilter{CapabilityID: cp.ID})
	if err != nil {
		return store.Approval{}, err
	}
	sensitive := map[string]bool{}
	for _, in := range cp.Inputs {
		sensitive[in.Name] = in.Sensitive
	}
	now := store.Micro(c.now())
	var why []string
	var once []store.Approval
	for _, a := range all {
		reason := c.refuse(a, l.Hash, inputs, sensitive, now)
		if reason == "" && len(a.Bounds.InputsSchema) > 0 {
			reason = checkInputsSchema(a.Bounds.InputsSchema, cp, inputs)
		}
		if reason != "" {
			why = append(why, "approval "+a.ID+": "+reason)
			continue
		}
		if !a.Once {
			return a, nil
		}
		once = append(once, a)
	}
	for _, a := range once {
		got, err := c.st.ConsumeApproval(ctx, a.ID, runID)
		if err == nil {
			return got, nil
		}
		why = append(why, err.Error())
	}
	if len(all) == 0 {
		why = append(why, "there is none (cua catalog approve "+cp.Ref()+")")
	}
	return store.Approval{}, domain.Errorf(domain.CodeApprovalRequired, "%s (%s): no approval covers this run: %s",
		cp.Ref(), l.Hash, strings.Join(why, "; "))
}

// refuse says why a cannot authorize a run of hash with inputs at now, or
// "" when it can.
func (c *Catalog) refuse(a store.Approval, hash string, inputs map[string]any, sensitive map[string]bool, now time.Time) string {
	switch {
	case a.ContentHash != hash:
		return fmt.Sprintf("approves other content (%s@%s, %s)", a.CapabilityID, a.Version, a.ContentHash)
	case !a.RevokedAt.IsZero():
		return "revoked at " + a.RevokedAt.Format(time.RFC3339)
	case !a.ExpiresAt.IsZero() && !a.ExpiresAt.After(now):
		return "expired at " + a.ExpiresAt.Format(time.RFC3339)
	case a.ConsumedBy != "":
		return "one-off, already used by run " + a.ConsumedBy
	}
	var exact map[string]string
	if a.Once {
		exact = a.Inputs
	}
	b := policy.InputBounds{Max: a.Bounds.Max, Allowed: a.Bounds.Allowed, Pattern: a.Bounds.Pattern, Exact: exact}
	if err := b.Check(inputs, sensitive); err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			return de.Message
		}
		return err.Error()
	}
	return ""
}

// ParseExpiry parses an approval lifetime: a Go duration ("36h") or a
// number of days ("30d"); "" is no expiry (0).
func ParseExpiry(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q: want a positive number of days (30d) or a duration (36h)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive number of days (30d) or a duration (36h)", s)
	}
	return d, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ap-" + hex.EncodeToString(b[:])
}

// compareSemver orders two semantic versions by major, minor, patch, then
// a release above its pre-releases; build metadata and what does not parse
// compare as text.
func compareSemver(a, b string) int {
	pa, pb := semverParts(a), semverParts(b)
	if pa == nil || pb == nil {
		return strings.Compare(a, b)
	}
	for i := range 3 {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	preA, preB := pre(a), pre(b)
	switch {
	case preA == preB:
		return strings.Compare(a, b)
	case preA == "":
		return 1
	case preB == "":
		return -1
	}
	return strings.Compare(preA, preB)
}

func semverParts(v string) []int {
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	fs := strings.Split(core, ".")
	if len(fs) != 3 {
		return nil
	}
	out := make([]int, 3)
	for i, f := range fs {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out[i] = n
	}
	return out
}

func pre(v string) string {
	core, _, _ := strings.Cut(v, "+")
	_, p, _ := strings.Cut(core, "-")
	return p
}
