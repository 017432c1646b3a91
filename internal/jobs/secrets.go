package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// Sensitive inputs never reach the queue (DESIGN invariants 6 and 15). A
// job's arguments are stored as JSON in River's job table, shown by the
// API and River's UI and kept in every backup of the queue's database, so
// an input the capability declares `sensitive: true` travels as a secret
// reference ([RunArgs.InputSecrets]: input name → ref) and the worker that
// takes the job resolves the reference from its own secret store
// (CUA_SECRET_<REF> or --secrets FILE) just before the run.
//
// The rules, checked once for every way into the queue ([Queue.Submit],
// [Queue.RunBatch], hence `cua submit`, `cua batch` and `cua serve`'s
// API), before anything is inserted:
//   - a literal value (Inputs) for a sensitive input is refused, naming
//     the input and saying how to pass a reference;
//   - a reference for an input that is not sensitive, or that the
//     capability does not declare, is refused: a reference is a promise
//     that the value is a secret, and a value that is not one belongs in
//     Inputs where a reviewer can see it;
//   - an input named in both maps is refused ([RunArgs.Validate]).
//
// The worker checks the same rules again against the capability it
// resolved (a ref without a version may name a newer one by then) and
// ends a job whose reference its store cannot resolve with
// SECRET_UNAVAILABLE, never retried. Idempotency keys and River's unique
// arguments hash the reference, never a value.

// secretRef is the syntax of a secret reference: what a capability file
// may write as {$secret: ref} (schema/capability.schema.json) and what
// secret.Store looks up as CUA_SECRET_<REF upper-cased> or as a key of a
// --secrets file.
var secretRef = regexp.MustCompile(`^[a-z][a-z0-9_]{0,99}$`)

// SecretPrefix marks a batch cell (CSV) holding a secret reference
// instead of a value: "$secret:REF". JSON Lines rows write the reference
// as an object, {"NAME": {"$secret": "REF"}}, as capability files do.
const SecretPrefix = "$secret:"

// Capabilities resolves a capability reference the way workers will (a
// *catalog.Catalog). With it, the queue checks a run's inputs against the
// capability before inserting the run.
type Capabilities interface {
	Resolve(ctx context.Context, ref string) (*capability.Loaded, store.Version, error)
}

// SecretSource resolves a secret reference to its value (a *secret.Store).
// Its errors must name the reference, never a value.
type SecretSource interface {
	Secret(ref string) (string, error)
}

// ErrRefused is matched (errors.Is) by every error for a run the queue
// refuses before inserting it: bad arguments, an unknown capability, a
// sensitive input given as a value. The message starts with the field at
// fault ("inputs.pin: …").
var ErrRefused = errors.New("run refused")

type refusal struct{ err error }

func (r *refusal) Error() string        { return r.err.Error() }
func (r *refusal) Unwrap() error        { return r.err }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

func refused(err error) error { return &refusal{err: err} }

// CheckInputs checks a's inputs and secret references against c: a
// sensitive input must come as a reference, a reference must name an
// input c declares sensitive. The first error (inputs sorted by name)
// names the field and the input, never a value.
func CheckInputs(c *domain.Capability, a RunArgs) error {
	for _, name := range slices.Sorted(maps.Keys(a.Inputs)) {
		if spec := c.Input(name); spec != nil && spec.Sensitive {
			return fmt.Errorf("inputs.%s: input %q of %s is sensitive: the queue never holds its value; "+
				"pass a secret reference instead (cua submit --input-secret %s=REF; the API's input_secrets {%q: \"REF\"}; "+
				"a batch cell %sREF or {\"$secret\": \"REF\"}) and set CUA_SECRET_<REF> or --secrets on the worker",
				name, name, c.Ref(), name, name, SecretPrefix)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.InputSecrets)) {
		spec := c.Input(name)
		switch {
		case spec == nil:
			return fmt.Errorf("input_secrets.%s: %s declares no input %q", name, c.Ref(), name)
		case !spec.Sensitive:
			return fmt.Errorf("input_secrets.%s: input %q of %s is not sensitive: pass its value in inputs "+
				"(a secret reference is only for an input declared sensitive: true)", name, name, c.Ref())
		}
	}
	return nil
}

// Check validates a and, when the queue was opened with
// [Config.Capabilities], checks its inputs against the capability a.Ref
// names. A run it refuses wraps [ErrRefused]; nothing is inserted.
func (q *Queue) Check(ctx context.Context, a RunArgs) error {
	check, _, err := q.checker(ctx, a.Ref)
	if err != nil {
		return err
	}
	return check(a)
}

// checker resolves ref once and returns the check of one run of it and
// the capability id its idempotency keys belong to.
func (q *Queue) checker(ctx context.Context, ref string) (func(RunArgs) error, string, error) {
	if q.caps == nil {
		id, _, _ := strings.Cut(ref, "@")
		return func(a RunArgs) error {
			if err := a.Validate(); err != nil {
				return refused(err)
			}
			return nil
		}, id, nil
	}
	ref, _, err := resolveActive(ctx, q.active, ref)
	if err != nil {
		return nil, "", err
	}
	l, _, err := q.caps.Resolve(ctx, ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, "", refused(fmt.Errorf("ref: %s is not in the catalog (cua catalog add FILE): %w", ref, err))
	case err != nil && domain.ErrorCode(err) != domain.CodeInternal:
		return nil, "", refused(fmt.Errorf("ref: %w", err))
	case err != nil:
		return nil, "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return func(a RunArgs) error {
		if err := a.Validate(); err != nil {
			return refused(err)
		}
		if err := CheckInputs(l.Capability, a); err != nil {
			return refused(err)
		}
		if err := CheckSchema(l.Capability, a); err != nil {
			return refused(err)
		}
		if _, err := l.Capability.EvidenceFor(a.Evidence); err != nil {
			return refused(err)
		}
		return nil
	}, l.Capability.ID, nil
}

// CheckSchema checks a's inputs against c's declared inputs before the
// run is queued (a worker would refuse it later): names match exactly, an
// unknown name is refused, every required input is given (as a value or,
// for a sensitive one, a secret reference), and every value satisfies its
// type, pattern, enum and bounds. The error names the field, never a
// sensitive value.
func CheckSchema(c *domain.Capability, a RunArgs) error {
	for _, name := range slices.Sorted(maps.Keys(a.Inputs)) {
		spec := c.Input(name)
		if spec == nil {
			return fmt.Errorf("inputs.%s: %s declares no input %q (names match exactly; it declares %s)",
				name, c.Ref(), name, inputNames(c))
		}
		if _, err := capability.CoerceInput(*spec, a.Inputs[name]); err != nil {
			return fmt.Errorf("inputs.%s: %v", name, err)
		}
	}
	for _, spec := range c.Inputs {
		_, given := a.Inputs[spec.Name]
		_, ref := a.InputSecrets[spec.Name]
		if spec.Required && spec.Default == nil && !given && !ref {
			return fmt.Errorf("inputs.%s: required input of %s is missing", spec.Name, c.Ref())
		}
	}
	return nil
}

func inputNames(c *domain.Capability) string {
	names := make([]string, 0, len(c.Inputs))
	for _, in := range c.Inputs {
		names = append(names, in.Name)
	}
	if len(names) == 0 {
		return "no inputs"
	}
	return strings.Join(names, ", ")
}

// resolveInputs returns a's inputs with every secret reference resolved
// from src. The error names the input and the reference, never a value.
func resolveInputs(src SecretSource, a RunArgs) (map[string]string, error) {
	if len(a.InputSecrets) == 0 {
		return a.Inputs, nil
	}
	in := maps.Clone(a.Inputs)
	if in == nil {
		in = make(map[string]string, len(a.InputSecrets))
	}
	for _, name := range slices.Sorted(maps.Keys(a.InputSecrets)) {
		ref := a.InputSecrets[name]
		if src == nil {
			return nil, fmt.Errorf("input_secrets.%s: secret %q: this worker has no secret store", name, ref)
		}
		v, err := src.Secret(ref)
		if err != nil {
			return nil, fmt.Errorf("input_secrets.%s: %w", name, err)
		}
		in[name] = v
	}
	return in, nil
}
