package heal

import (
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// State is where a proposal is in its review.
type State string

// Proposal states. A proposal starts proposed (or quarantined when its diff
// touches a refused field); eval moves it to evaluated or eval_failed;
// approve (from evaluated) makes it the active version as a canary; the
// canary ends promoted or reverted, and a promoted version still reverts
// on its first failing run; rollback ends rolled_back; reject ends
// rejected.
const (
	StateProposed    State = "proposed"
	StateQuarantined State = "quarantined"
	StateEvaluated   State = "evaluated"
	StateEvalFailed  State = "eval_failed"
	StateRejected    State = "rejected"
	StateCanary      State = "canary"
	StatePromoted    State = "promoted"
	StateReverted    State = "reverted"
	StateRolledBack  State = "rolled_back"
)

// DefaultCanaryRuns is how many runs of an approved version are a canary.
const DefaultCanaryRuns = 5

// Proposal is a draft next version of a capability that changes only how
// one step finds its target.
type Proposal struct {
	ID           string `json:"id"`
	CapabilityID string `json:"capability_id"`
	// BaseVersion and BaseHash name the version the halted run ran.
	BaseVersion string `json:"base_version"`
	BaseHash    string `json:"base_hash"`
	// Version and Hash name the draft (a patch bump of the base).
	Version string `json:"version"`
	Hash    string `json:"hash"`
	// Body is the draft, sealed, as JSON.
	Body  []byte `json:"body"`
	State State  `json:"state"`
	// Step is the step whose target changes.
	Step string `json:"step"`
	// Changes is the semantic diff against the base; Refused the changes
	// of fields a proposal may not touch (non-empty: quarantined).
	Changes []Change `json:"changes"`
	Refused []Change `json:"refused,omitempty"`
	// Evidence is why the proposal was written.
	Evidence Evidence  `json:"evidence"`
	Eval     *Eval     `json:"eval,omitempty"`
	Approval *Approval `json:"approval,omitempty"`
	Canary   *Canary   `json:"canary,omitempty"`
	Created  time.Time `json:"created"`
}

// Ref is the draft's id@version.
func (p *Proposal) Ref() string { return p.CapabilityID + "@" + p.Version }

// BaseRef is the base's id@version.
func (p *Proposal) BaseRef() string { return p.CapabilityID + "@" + p.BaseVersion }

// Evidence is what the halted run saw: its failure, the screen (named by
// the run's evidence) and the one candidate, with why it is the only one.
type Evidence struct {
	RunID   string             `json:"run_id"`
	Code    domain.FailureCode `json:"code"`
	Message string             `json:"message"`
	// Before names the halted step's screenshot in the run's evidence
	// ("screenshots/step-N.png", the screen before the proposal); the
	// screens after are the eval runs' (Eval.Cases[].RunID).
	Before    string    `json:"before"`
	URL       string    `json:"url"`
	Candidate Candidate `json:"candidate"`
	// Why says how the candidate was singled out.
	Why string `json:"why"`
	// Considered lists the other nodes of the step's role and scope and
	// why each was set aside.
	Considered []string `json:"considered,omitempty"`
}

// Candidate is the node a proposal's target resolves to on the halted
// screen.
type Candidate struct {
	Path   string `json:"path"`
	Role   string `json:"role"`
	Name   string `json:"name"`
	Frame  string `json:"frame,omitempty"`
	Region string `json:"region,omitempty"`
}

// Eval is the recorded result of `cua heal eval`.
type Eval struct {
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Passed bool      `json:"passed"`
	Cases  []CaseRun `json:"cases"`
	Note   string    `json:"note,omitempty"`
}

// CaseRun is one battery case's run of the draft.
type CaseRun struct {
	Battery string           `json:"battery"` // drift or fault
	Name    string           `json:"name"`
	Want    string           `json:"want"`
	RunID   string           `json:"run_id"`
	Status  domain.RunStatus `json:"status"`
	Code    string           `json:"code,omitempty"`
	Passed  bool             `json:"passed"`
	Why     string           `json:"why"`
}

// Approval binds an approver to the base and the draft's content hashes.
type Approval struct {
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	OldHash  string    `json:"old_hash"`
	NewHash  string    `json:"new_hash"`
	Previous string    `json:"previous"` // the active id@version before
}

// Canary counts the first runs of an approved version.
type Canary struct {
	Runs int      `json:"runs"` // how many runs the canary lasts
	Done []string `json:"done"` // run ids that passed
	// Failed is the run that reverted the version ("" when none).
	Failed string `json:"failed,omitempty"`
}

// Active is the version "ID@active" names.
type Active struct {
	CapabilityID string `json:"capability_id"`
	Version      string `json:"version"`
	Hash         string `json:"hash"`
	// Proposal made this version active ("" for a base set by hand).
	Proposal string `json:"proposal,omitempty"`
	// Previous is the version active before, restored by a revert or a
	// rollback.
	Previous     string `json:"previous,omitempty"`
	PreviousHash string `json:"previous_hash,omitempty"`
}

// Ref is the active id@version.
func (a Active) Ref() string { return a.CapabilityID + "@" + a.Version }

// Transition is one entry of a proposal's history.
type Transition struct {
	Proposal string    `json:"proposal"`
	From     State     `json:"from,omitempty"`
	To       State     `json:"to"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	RunID    string    `json:"run_id,omitempty"`
	Note     string    `json:"note"`
}
