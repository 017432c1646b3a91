package evidence

import (
	"errors"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
)

// The checks that refuse a run before a surface opens, as a run_refused
// event's check names them.
const (
	// CheckApproval: no approval covers the unattended run (none, expired,
	// revoked, one-off already used, other content or inputs).
	CheckApproval = "approval"
	// CheckIdempotencyKey: the run's idempotency key is bound to a run
	// given other inputs, or to one whose effect is unconfirmed.
	CheckIdempotencyKey = "idempotency_key"
	// CheckOrigin: the base URL's origin is not one the capability
	// declares or the worker allows.
	CheckOrigin = "origin"
	// CheckInputs: the inputs do not satisfy the input schema.
	CheckInputs = "inputs"
	// CheckBaseURL: the base URL is not an http(s) URL.
	CheckBaseURL = "base_url"
	// CheckCapability: the capability does not resolve in the catalog.
	CheckCapability = "capability"
	// CheckContentHash: the capability resolves to content other than the
	// pinned hash.
	CheckContentHash = "content_hash"
	// CheckCalledCapabilities: a prerequisite or remedy does not resolve,
	// is not sealed, or is not the content its pin names.
	CheckCalledCapabilities = "called_capabilities"
	// CheckPolicy: the capability's policy does not build.
	CheckPolicy = "policy"
	// CheckIrreversible: an irreversible step could never be authorized.
	CheckIrreversible = "irreversible_authorization"
	// CheckSecrets: a secret the run needs is not in the worker's store.
	CheckSecrets = "secrets"
	// CheckEvidence: the run asked for an evidence level its capability
	// does not allow (--evidence none for one that is not read-only).
	CheckEvidence = "evidence"
)

// Refusal is a run refused before a surface opened, as its bundle tells
// it (see WriteRefusal).
type Refusal struct {
	// Record is the run's final record: run id, capability, content hash,
	// base URL, status FAILED, failure code and message. It is written
	// redacted.
	Record *domain.RunRecord
	// Inputs are the run's inputs as given (bound when they bound);
	// Sensitive names those written only as keyed digests.
	Inputs    map[string]any
	Sensitive []string
	// Check names the check that refused the run (Check* constants).
	Check string
	// At stamps the events (default now).
	At time.Time
}

// WriteRefusal writes the bundle of a run refused before a surface
// opened, under <root>/runs/<run id>/, through the same writer as every
// run: run_started (the capability id@version, its content hash and the
// inputs, a sensitive one as its keyed digest), run_refused (the failure
// code, the refusing check and why), run_finished, record.json, then the
// manifest and, with a deployment key, its signature. A sensitive input's
// value is registered with the redactor first, so no sink holds it. It returns the
// bundle's directory and the anchor its run's index row keeps.
func WriteRefusal(root string, red *redact.Redactor, r Refusal) (string, Anchor, error) {
	rec := r.Record
	if rec == nil || rec.RunID == "" {
		return "", Anchor{}, errors.New("evidence: refusal: no record with a run id")
	}
	if red == nil {
		red = redact.New()
	}
	b, err := Open(root, rec.RunID, red)
	if err != nil {
		return "", Anchor{}, err
	}
	err = b.AppendRefusal(r)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return b.Dir(), Anchor{}, fmt.Errorf("evidence: refused run %s: %w", rec.RunID, err)
	}
	a, err := ReadAnchor(b.Dir())
	return b.Dir(), a, err
}

// AppendRefusal appends a refused run's events to b (run_started,
// run_refused, run_finished) and writes its record; the caller closes b.
// A sensitive input's value is registered with b's redactor first.
// WriteRefusal is the whole bundle.
func (b *Bundle) AppendRefusal(r Refusal) error {
	rec := r.Record
	for _, name := range r.Sensitive {
		if v, ok := r.Inputs[name]; ok {
			b.red.RegisterLiteral(fmt.Sprint(v))
		}
	}
	at := r.At
	if at.IsZero() {
		at = time.Now()
	}
	in := r.Inputs
	if in == nil {
		in = map[string]any{}
	}
	events := []Payload{
		RunStarted{Capability: rec.Capability, ContentHash: rec.ContentHash, BaseURL: rec.BaseURL, Inputs: in, Sensitive: r.Sensitive},
		RunRefused{Code: rec.FailureCode, Check: r.Check, Reason: rec.Message},
		RunFinished{Status: rec.Status, FailureCode: rec.FailureCode, Outcome: rec.Outcome},
	}
	for _, p := range events {
		if err := b.Append(NewEvent(at, domain.ActorAutomation, "", p)); err != nil {
			return err
		}
	}
	if err := b.WriteRecord(RedactRecord(rec, b.red)); err != nil {
		return err
	}
	return b.Sync()
}
