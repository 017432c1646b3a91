package recorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// Errors of [Compile]; test with errors.Is.
var (
	// ErrEmptyTrace is returned for a nil trace or one that records no step.
	ErrEmptyTrace = errors.New("recorder: the trace records no steps")
	// ErrNothingToCompile is returned when every step of the trace was
	// dropped (none succeeded, or none could be described).
	ErrNothingToCompile = errors.New("recorder: no step of the trace can be compiled")
)

// DefaultVersion is the version of a compiled capability when
// [Options.Version] is empty.
const DefaultVersion = "1.0.0"

// Defaults written into every compiled capability.
const (
	// waitMS bounds the wait for the postcondition of a step that loads a
	// page.
	waitMS = 10000
	// maxDurationMS is the compiled policy's wall-time budget.
	maxDurationMS = 60000
	// minMaxSteps is the smallest compiled step budget; the budget is three
	// executions per step (retries included), at least this.
	minMaxSteps = 10
	// transientAttempts is max_attempts of the transient_load rule.
	transientAttempts = 2
	// signOnAttempts is max_attempts of a session_expired rule.
	signOnAttempts = 1
)

// transientBackoff spaces transient_load retries: 100 ms, then 200 ms.
var transientBackoff = domain.Backoff{InitialMS: 100, Factor: 2, MaxMS: 1000}

// escalationTriggers are the failure codes a compiled capability hands to
// a human.
var escalationTriggers = []domain.FailureCode{
	domain.CodeRecoveryExhausted, domain.CodeUnexpectedState,
	domain.CodeTargetNotFound, domain.CodeTargetAmbiguous,
}

// Options steers [Compile].
type Options struct {
	// ID is the capability's namespaced id (memberdesk.savings_balance).
	// When empty, one is derived from the goal ("discovered.look_savings_
	// balance_member") and a note asks for a real one.
	ID string
	// Version is the SemVer version; DefaultVersion when empty.
	Version string
	// Title is the human title; the goal when empty.
	Title string
	// Now stamps provenance.compiled_at (RFC 3339, UTC). When nil, the
	// capability carries no compile time.
	Now func() time.Time
	// KnownCapabilities are capabilities the compiled one may refer to, keyed
	// by id or id@version (a catalog's latest versions). They tell whether a
	// prerequisite signs on, and what its first step targets.
	KnownCapabilities map[string]*domain.Capability
	// FinalScreen is the snapshot the discovery run ended on. When set,
	// Compile proposes a reentry at the earliest step whose target it
	// shows, if the validator admits one (see the package doc); when nil,
	// no reentry is considered.
	FinalScreen *domain.UiSnapshot
	// Others are other runs of the same workflow (traces of the same
	// goal on the same application). A safe step of the compiled trace
	// whose target some of them never acted on is a screen that appears
	// only in some runs: it is made optional (when: node_exists its
	// target) with a note. See optional.go.
	Others []*domain.Trace
}

// Result is a compiled draft capability and what a reviewer must check.
type Result struct {
	// Capability is the draft, with defaults applied (as capability.Parse
	// would return it) and without content_hash.
	Capability *domain.Capability
	// Notes are the review notes, also in Capability.Provenance.ReviewNotes.
	Notes []string
}

// Compile compiles a discovery trace into a draft capability.
//
// It returns ErrEmptyTrace for a nil or empty trace, ErrNothingToCompile
// when no step survives (the error lists why each was dropped), an error
// for a trace without a usable base URL, and an error when the result does
// not validate (for example an undeclared predicate in the trace's outcome).
// The trace is not modified. Compile is deterministic: the same trace and
// options give the same capability and notes.
func Compile(t *domain.Trace, opts Options) (*Result, error) {
	if t == nil || len(t.Steps) == 0 {
		return nil, ErrEmptyTrace
	}
	k := &compiler{
		t:         t,
		opts:      opts,
		ids:       map[string]bool{},
		litInputs: map[string]string{},
		names:     map[string]bool{},
		outputs:   map[string]bool{},
	}
	if err := k.compile(); err != nil {
		return nil, err
	}
	c := k.c
	capability.ApplyDefaults(c)
	k.proposeReentry()
	c.Provenance.ReviewNotes = slices.Clone(k.notes)

	// A compiled capability must load as a draft and hash as it is; anything
	// else is a recorder bug or a trace whose predicates do not validate.
	data, err := Marshal(c, k.notes)
	if err != nil {
		return nil, err
	}
	l, err := capability.Parse(c.ID+".yaml", data)
	if err != nil {
		return nil, fmt.Errorf("recorder: the compiled capability does not validate: %w", err)
	}
	want, err := capability.Hash(c)
	if err != nil {
		return nil, err
	}
	if l.Hash != want {
		return nil, fmt.Errorf("recorder: the written capability hashes %s, the compiled one %s", l.Hash, want)
	}
	return &Result{Capability: c, Notes: slices.Clone(k.notes)}, nil
}

// compiler is the state of one compilation.
type compiler struct {
	t     *domain.Trace
	opts  Options
	c     *domain.Capability
	notes []string

	base     *url.URL
	hosts    []string // hosts navigated to besides the base URL's
	entry    bool     // the entrypoint came from a navigation
	firstURL string   // URLBefore of the first compiled step

	ids       map[string]bool   // step ids taken
	litInputs map[string]string // literal → declared input name
	names     map[string]bool   // input names taken
	outputs   map[string]bool   // outputs extracted so far
	// goalLits maps literals that become inputs (goal literals typed or
	// selected, and the trace's Inputs) to the first step typing them.
	goalLits map[string]*domain.TraceStep
	litOrder []string // goalLits keys, longest first, for URL templating
	dropped  []string
	from     []*domain.TraceStep // the trace step of each compiled step
}

func (k *compiler) note(format string, args ...any) {
	k.notes = append(k.notes, fmt.Sprintf(format, args...))
}

// noteIdentity notes that what checks the screen against the given inputs.
func (k *compiler) noteIdentity(what string, inputs []string) {
	if len(inputs) == 0 {
		return
	}
	k.note("%s checks that the screen shows the value of input %s (an identity check: {input.NAME} is bound to each run's value)", what, strings.Join(inputs, ", "))
}

func (k *compiler) compile() error {
	t := k.t
	if err := k.baseURL(); err != nil {
		return err
	}
	k.c = &domain.Capability{
		SchemaVersion: domain.SchemaVersion,
		ID:            k.opts.ID,
		Version:       k.opts.Version,
		Title:         k.opts.Title,
		Surface:       t.Surface,
	}
	c := k.c
	if c.Surface == "" {
		c.Surface = domain.SurfaceWeb
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.ID == "" {
		c.ID = deriveID(t.Goal)
		k.note("the id %s was derived from the goal: give the capability a real namespaced id", c.ID)
	}
	if known := k.known(c.ID + "@" + c.Version); known != nil && known.Ref() == c.Ref() {
		k.note("%s already exists: bump the version before sealing", c.Ref())
	}
	if !t.Finished {
		k.note("the discovery run did not finish: the workflow may be incomplete")
	}

	k.collectLiterals()
	for i := range t.Steps {
		k.step(i)
	}
	k.optionalSteps()
	k.foldLoops()
	if len(c.Steps) == 0 {
		msg := strings.Join(k.dropped, "; ")
		if msg == "" {
			msg = "the trace holds only the entrypoint navigation"
		}
		return fmt.Errorf("%w: %s", ErrNothingToCompile, msg)
	}
	if !k.entry {
		// Where the first step acted, when that was a web page; else the
		// base URL.
		c.Entrypoint.URLPattern = "{base_url}/"
		if u, err := url.Parse(k.firstURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			c.Entrypoint.URLPattern = k.templateURL(k.firstURL)
		}
	}

	// The goal, with each input's value replaced by <NAME>: the capability
	// serves every value, and a sensitive one must not be written down.
	goal := strings.TrimSpace(k.generalGoal())
	if c.Title == "" {
		c.Title = truncate(goal, 200)
		if c.Title == "" {
			c.Title = "Compiled capability"
		}
	}
	if goal != "" {
		from := "a discovery run"
		if demonstrated(t) {
			from = "a human demonstration"
		}
		c.Description = "Compiled from " + from + " with the goal: " + goal
	}

	k.prerequisites()
	k.recovery()
	if t.Checkpoint == nil {
		k.note("the trace confirms no checkpoint: a run succeeds once its steps are done; add one that proves the goal")
	} else if when, used, what := k.identity(t.Checkpoint); what != "" {
		k.note("the checkpoint the run confirmed mentions %s, which differs on every run; it was left out: add one that proves the goal", what)
	} else {
		c.Checkpoint = &domain.Checkpoint{
			Description: "The state the discovery run reached and its audit confirmed.",
			When:        *when,
		}
		k.noteIdentity("the checkpoint", used)
	}
	if t.Outcome != nil {
		o := clone(*t.Outcome)
		if code := ident(o.Code, "outcome", maxName); code != o.Code {
			k.note("outcome %q is named %s (codes are snake_case)", o.Code, code)
			o.Code = code
		}
		if when, used, what := k.identity(&o.When); what != "" {
			k.note("outcome %s was left out: its condition mentions %s, which differs on every run", o.Code, what)
		} else {
			o.When = *when
			c.Outcomes = append(c.Outcomes, o)
			k.note("outcome %s was declared by the discovery run: check that its condition shows only that outcome", o.Code)
			k.noteIdentity("outcome "+o.Code+": its condition", used)
		}
	}
	k.finish()
	return nil
}

// baseURL parses the trace's base URL, falling back to the origin of the
// first URL the trace saw.
func (k *compiler) baseURL() error {
	raw := k.t.BaseURL
	if raw == "" {
		for _, s := range k.t.Steps {
			for _, u := range []string{s.URLBefore, s.Action.URL} {
				if p, err := url.Parse(u); err == nil && p.Host != "" && raw == "" {
					raw = p.Scheme + "://" + p.Host + "/"
				}
			}
		}
		if raw != "" {
			k.note("the trace has no base URL: using %s, where the run started", raw)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("recorder: the trace's base URL %q is not an http(s) URL", raw)
	}
	k.base = u
	return nil
}

// finish fills risk, escalation, policy and provenance.
func (k *compiler) finish() {
	c := k.c
	var risks []domain.Risk
	gated := false
	used := map[domain.ActionType]bool{domain.ActNavigate: true}
	for _, s := range flatSteps(c.Steps) {
		risks = append(risks, s.Risk)
		gated = gated || s.Gate
		used[s.Action] = true
	}
	for _, r := range c.Recovery {
		if r.Remedy == domain.RemedyReload {
			used[domain.ActReload] = true
		}
	}
	c.Risk = domain.MaxRisk(risks...)

	c.Escalation.Triggers = slices.Clone(escalationTriggers)
	if gated {
		c.Escalation.Triggers = append(c.Escalation.Triggers, domain.CodeGateReached)
	}

	c.Policy.AllowedDomains = k.domains()
	for _, a := range []domain.ActionType{
		domain.ActClick, domain.ActType, domain.ActSelect, domain.ActPressKey, domain.ActExtract,
		domain.ActWaitFor, domain.ActAssert, domain.ActNavigate, domain.ActReload,
	} {
		if used[a] {
			c.Policy.AllowedActions = append(c.Policy.AllowedActions, a)
		}
	}
	c.Policy.MaxSteps = max(minMaxSteps, 3*c.StepCount())
	c.Policy.MaxDurationMS = maxDurationMS

	p := &domain.Provenance{Source: "discovery", RunID: k.t.RunID, Model: k.t.Model, Tokens: k.t.Tokens}
	if demonstrated(k.t) {
		p.Source = "demonstration"
	}
	if p.Tokens == 0 {
		for _, s := range k.t.Steps {
			p.Tokens += s.Tokens
		}
	}
	if k.opts.Now != nil {
		p.CompiledAt = k.opts.Now().UTC().Format(time.RFC3339)
	}
	c.Provenance = p
}

// domains lists the hosts navigation may reach: the base URL's (with its
// loopback twin) and any other host the run navigated to.
func (k *compiler) domains() []string {
	var out []string
	add := func(h string) {
		if h != "" && !slices.Contains(out, h) {
			if !validHost(h) {
				k.note("host %s cannot be listed in policy.allowed_domains: the policy allows the run's base URL host only", h)
				return
			}
			out = append(out, h)
		}
	}
	host := strings.ToLower(k.base.Hostname())
	add(host)
	switch host {
	case "127.0.0.1":
		add("localhost")
	case "localhost":
		add("127.0.0.1")
	}
	for _, h := range k.hosts {
		add(h)
	}
	return out
}

func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; !isWordByte(c) && c != '.' && c != '-' {
			return false
		}
	}
	return h != ""
}

// demonstrated reports whether a human performed every successful step.
func demonstrated(t *domain.Trace) bool {
	n := 0
	for _, s := range t.Steps {
		if s.Verdict != verdictOK {
			continue
		}
		if s.Action.Actor != domain.ActorHuman {
			return false
		}
		n++
	}
	return n > 0
}

// deriveID makes "discovered.<up to five goal words>".
func deriveID(goal string) string {
	stop := map[string]bool{"a": true, "an": true, "the": true, "of": true, "for": true, "to": true, "and": true, "in": true, "on": true, "with": true, "by": true, "at": true, "from": true, "up": true}
	var words []string
	for _, w := range strings.Fields(strings.ToLower(goal)) {
		w = snake(w)
		if w == "" || stop[w] || w[0] < 'a' || w[0] > 'z' || strings.ContainsAny(w, "0123456789") {
			continue
		}
		if words = append(words, w); len(words) == 5 {
			break
		}
	}
	if len(words) == 0 {
		return "discovered.capability"
	}
	return "discovered." + ident(strings.Join(words, "_"), "capability", 100)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

func ptr[T any](v T) *T { return &v }

// clone deep-copies a domain value through JSON, so the capability never
// shares memory with the trace (defaults are applied to it in place). The
// domain types it copies (targets, predicates, outcomes, prerequisites)
// hold only strings, numbers, slices, maps and pointers, so encoding them
// cannot fail; a failure is a programming error.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("recorder: copy %T: %v", v, err))
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("recorder: copy %T: %v", v, err))
	}
	return out
}
