package jobs

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/riverqueue/river"

	"github.com/cuahq/cua/internal/domain"
)

// Kind is the River job kind of a run.
const Kind = "cua_run"

// RunArgs is one run: the job's arguments, stored as JSON in the queue.
type RunArgs struct {
	// Ref names the capability in the catalog: id@version, id or sha256:….
	Ref string `json:"ref" river:"unique"`
	// ContentHash, when set, pins the content the run must execute: a
	// catalog version with other content is refused.
	ContentHash string `json:"content_hash,omitempty"`
	// Inputs are input values by name. A sensitive input is never here
	// (see CheckInputs): the queue's table, its API and River's UI show
	// every value.
	Inputs map[string]string `json:"inputs,omitempty"`
	// InputSecrets are the sensitive inputs, by name, as secret
	// references (CUA_SECRET_<REF> or --secrets FILE on the worker),
	// which the worker resolves just before the run.
	InputSecrets map[string]string `json:"input_secrets,omitempty"`
	// IdempotencyKey, when set, makes the job unique per Ref: submitting
	// the same key again returns the first job instead of a new one.
	IdempotencyKey string `json:"idempotency_key,omitempty" river:"unique"`
	// KeyGeneration is the generation of the key's binding this job was
	// queued under (see [KeyStore]): a key a person released is queued
	// again at the next one. Set by Submit.
	KeyGeneration int64 `json:"key_generation,omitempty" river:"unique"`
	// Priority is River's priority, 1 (first) to 4; 0 means 1.
	Priority int `json:"priority,omitempty"`
	// BaseURL is the application's base URL.
	BaseURL string `json:"base_url"`
	// Unattended requires a catalog approval covering the inputs.
	Unattended bool `json:"unattended,omitempty"`
	// ReleaseGates are the gated step ids a reviewer released.
	ReleaseGates []string `json:"release_gates,omitempty"`
	// Batch groups the jobs of one `cua batch` (its name), for listing.
	Batch string `json:"batch,omitempty"`
	// SubmittedBy is the principal that submitted the run, set by the
	// jobs API from the caller's bearer token (never from the request);
	// empty for a run queued otherwise (`cua batch`).
	SubmittedBy string `json:"submitted_by,omitempty"`
	// Evidence raises the capability's evidence level for the run (full),
	// or lowers it to none for a read-only capability that does not seal
	// full (refused for any other when the job is submitted); empty keeps
	// the capability's.
	Evidence domain.EvidenceLevel `json:"evidence,omitempty"`
}

// Kind implements river.JobArgs.
func (RunArgs) Kind() string { return Kind }

// InsertOpts implements river.JobArgsWithInsertOpts: a run with an
// idempotency key is unique by (Ref, IdempotencyKey) in every state. Its
// tags, which River UI shows and filters by, name its capability
// ([CapabilityTag]) and "batch" for a batch's row; its metadata names the
// capability as referenced (see [Queue.Submit]).
func (a RunArgs) InsertOpts() river.InsertOpts {
	o := river.InsertOpts{MaxAttempts: MaxAttempts, Priority: max(a.Priority, 1), Tags: []string{}}
	if a.IdempotencyKey != "" {
		o.UniqueOpts = river.UniqueOpts{ByArgs: true}
	}
	if tag := CapabilityTag(a.Ref); tag != "" {
		o.Tags = append(o.Tags, tag)
	}
	if a.Batch != "" {
		o.Tags = append(o.Tags, "batch")
	}
	o.Metadata, _ = json.Marshal(map[string]string{"capability": a.Ref})
	return o
}

var (
	notTagChar = regexp.MustCompile(`[^\w-]`)
	tagRE      = regexp.MustCompile(`\A\w[\w-]+\w\z`) // River's rule for a tag
)

// CapabilityTag is the River tag of a run of ref: the last dotted part of
// its capability id (memberdesk.transfer_funds@1.2.0 → transfer_funds),
// any character River's tags do not take made "_"; "" for a sha256:
// reference or a name too short for a tag.
func CapabilityTag(ref string) string {
	id, _, _ := strings.Cut(ref, "@")
	if strings.HasPrefix(id, "sha256:") {
		return ""
	}
	tag := notTagChar.ReplaceAllString(id[strings.LastIndex(id, ".")+1:], "_")
	if len(tag) > 255 || !tagRE.MatchString(tag) {
		return ""
	}
	return tag
}

// MaxAttempts bounds the attempts of a run that sends no effect.
const MaxAttempts = 5

// Validate checks the arguments before they reach the queue; errors name
// the field.
func (a RunArgs) Validate() error {
	switch {
	case strings.TrimSpace(a.Ref) == "":
		return fmt.Errorf("ref: a capability reference (ID, ID@VERSION or sha256:HASH) is required")
	case a.ContentHash != "" && !strings.HasPrefix(a.ContentHash, "sha256:"):
		return fmt.Errorf("content_hash: want sha256:HEX, got %q", a.ContentHash)
	case a.Priority < 0 || a.Priority > 4:
		return fmt.Errorf("priority: want 1 to 4, got %d", a.Priority)
	case a.BaseURL == "":
		return fmt.Errorf("base_url: the application's base URL is required")
	case len(a.IdempotencyKey) > 200:
		return fmt.Errorf("idempotency_key: at most 200 characters")
	}
	for k := range a.Inputs {
		if k == "" {
			return fmt.Errorf("inputs: an input name is empty")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.InputSecrets)) {
		switch _, both := a.Inputs[k]; {
		case k == "":
			return fmt.Errorf("input_secrets: an input name is empty")
		case !secretRef.MatchString(a.InputSecrets[k]):
			// The reference is not echoed: a value pasted by mistake must
			// not reach a log through its error.
			return fmt.Errorf("input_secrets.%s: not a secret reference: want lower-case letters, digits and _, "+
				"starting with a letter (REF of CUA_SECRET_<REF>)", k)
		case both:
			return fmt.Errorf("input_secrets.%s: input %q is given both as a value (inputs) and as a secret reference; give only the reference", k, k)
		}
	}
	return nil
}

// RunID is the run id of one attempt of a job: the catalog indexes the
// attempt under it before a surface opens, so a later attempt can find it.
func RunID(jobID int64, attempt int) string { return fmt.Sprintf("j%d-a%d", jobID, attempt) }
