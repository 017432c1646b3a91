// Package evidence owns a run's evidence: the run record, the typed event
// kinds (one Go type and one JSON shape per kind, published as
// schema/event-log.schema.json) and the hash-chained event log under
// <data-dir>/runs/<run-id>/; the masked per-step screenshots
// (screenshots/step-NNN.png, named by their step_finished event); the
// control-plane documents a run leaves beside its record (plan.json,
// receipt.json, gate.json, built by internal/receipt); the manifest.json a
// finished bundle gets on Close (every file's sha256 and size, the chain
// head); and Verify, which says whether a bundle is share_ready (chain,
// manifest, secret and host-path scans) reading nothing but the bundle.
//
// Layout of a finished bundle:
//
//	record.json      the run record (redacted)
//	events.jsonl     the hash-chained event log
//	screenshots/     step-NNN.png, masked before encoding by the surface
//	plan.json        the action plan (replay)
//	receipt.json     the receipt (replay)
//	gate.json        the handoff gate, when the run stopped at one
//	manifest.json    sha256 and size of every other file, the chain head
//
// Every string passes through the redactor before it reaches a file (DESIGN
// invariant 6); evidence never writes outside the run's directory, never
// rewrites a written event, and never decides anything about a run: it
// records what the engines tell it.
package evidence

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/redact"
)

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Event is one line of events.jsonl. Emitters set Payload (its kind gives
// Type, its JSON shape gives Data); Data is the generic view of a line read
// back, or of an event written without a typed payload.
type Event struct {
	Seq    int            `json:"seq"`
	At     string         `json:"at"`
	Type   string         `json:"type"`
	Actor  domain.Actor   `json:"actor,omitempty"`
	StepID string         `json:"step_id,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
	Prev   string         `json:"prev"`
	Hash   string         `json:"hash"`
	// Payload, when set, is the event's typed data; Append encodes it into
	// Type and Data.
	Payload Payload `json:"-"`
}

// NewEvent is the event of kind p at the given time (RFC 3339, UTC), by
// actor, for step (empty for a run-level event).
func NewEvent(at time.Time, actor domain.Actor, step string, p Payload) Event {
	return Event{At: at.UTC().Format(time.RFC3339Nano), Type: p.EventType(), Actor: actor, StepID: step, Payload: p}
}

// Bundle is one run's evidence directory. Safe for concurrent use.
type Bundle struct {
	dir  string
	red  *redact.Redactor
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	seq  int
	prev string
	// runID names the run in the manifest.
	runID string
	// shots counts the screenshots written.
	shots int
	// key signs the manifest at Close (nil: the bundle is unsigned);
	// inputKey keys the digests of sensitive inputs in run_started.
	key      ed25519.PrivateKey
	inputKey []byte
	// What the manifest says of the run: the capability and its content
	// hash (from run_started, else the record) and the digest of the
	// inputs run_started carries.
	capability, contentHash, inputsDigest string
	// root is the data root the bundle was opened under; publishErr is
	// its publish's error at Close (see PublishTo).
	root       string
	publishErr error
}

// Open creates <root>/runs/<runID>/ and its event log. The bundle is
// signed at Close with the deployment key (signkey.Load(root):
// CUA_SIGNING_KEY, else <root>/keys/signing.key); with no key configured
// it is unsigned, and a key that is configured but unusable is an error.
func Open(root, runID string, red *redact.Redactor) (*Bundle, error) {
	if !runIDPattern.MatchString(runID) {
		return nil, fmt.Errorf("evidence: bad run id %q: want letters, digits, '.', '_' or '-', starting with a letter or digit", runID)
	}
	key, _, err := signkey.Load(root)
	if err != nil && !errors.Is(err, signkey.ErrNoKey) {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	dir := filepath.Join(root, "runs", runID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("evidence: create run dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("evidence: create event log: %w", err)
	}
	return &Bundle{dir: dir, red: red, f: f, w: bufio.NewWriterSize(f, 64<<10), prev: Genesis, runID: runID,
		key: key, inputKey: inputKey(key), root: root}, nil
}

// Dir returns the run's evidence directory.
func (b *Bundle) Dir() string { return b.dir }

// Append redacts e's content (type, time, step and data; never the chain
// fields), chains it to the previous event and buffers it. An event that
// cannot be encoded is refused and uses no sequence number. Call Sync at
// checkpoints and Close at the end.
func (b *Bundle) Append(e Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return fmt.Errorf("evidence: bundle closed")
	}
	if rs, ok := e.Payload.(RunStarted); ok {
		e.Payload = b.sealInputs(rs)
	}
	if e.Payload != nil {
		data, err := payloadData(e.Payload)
		if err != nil {
			return err
		}
		e.Type, e.Data = e.Payload.EventType(), data
	}
	e.Type, e.At, e.StepID = b.red.String(e.Type), b.red.String(e.At), b.red.String(e.StepID)
	e.Actor = domain.Actor(b.red.String(string(e.Actor)))
	if e.Data != nil {
		data, ok := b.red.Value(e.Data).(map[string]any)
		if !ok {
			data = map[string]any{"redacted": "[REDACTED]"}
		}
		e.Data = data
	}
	if e.Type == (RunStarted{}).EventType() && b.contentHash == "" {
		b.noteRunStarted(e.Data)
	}
	e.Seq = b.seq + 1
	e.Prev, e.Hash = b.prev, ""
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("evidence: encode event: %w", err)
	}
	sum := sha256.Sum256(append([]byte(b.prev), body...))
	e.Hash = "sha256:" + hex.EncodeToString(sum[:])
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("evidence: encode event: %w", err)
	}
	b.seq++
	b.prev = e.Hash
	if _, err := b.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("evidence: write event: %w", err)
	}
	return nil
}

// Sync flushes buffered events to disk.
func (b *Bundle) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return nil
	}
	if err := b.w.Flush(); err != nil {
		return fmt.Errorf("evidence: flush events: %w", err)
	}
	return b.f.Sync()
}

// WriteRecord writes record.json atomically, redacted.
func (b *Bundle) WriteRecord(rec *domain.RunRecord) error {
	b.mu.Lock()
	if b.contentHash == "" {
		b.capability, b.contentHash = b.red.String(rec.Capability), b.red.String(rec.ContentHash)
	}
	b.mu.Unlock()
	raw, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: encode record: %w", err)
	}
	raw, err = b.red.JSON(raw)
	if err != nil {
		return fmt.Errorf("evidence: redact record: %w", err)
	}
	return writeAtomic(filepath.Join(b.dir, "record.json"), raw)
}

// Close flushes and closes the event log, then finishes the bundle: it
// writes manifest.json (see Manifest) atomically over every file the run
// directory then holds and, with a deployment key, manifest.sig (see
// Signature). It is idempotent. An Append that returned nil
// before Close is on disk after it. When a store is configured for the
// bundle's data root (PublishTo), the finished bundle is then published to
// it; a publish failure does not fail Close (see PublishErr).
func (b *Bundle) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return nil
	}
	err := b.w.Flush()
	if err == nil {
		err = b.f.Sync()
	}
	b.w = nil
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("evidence: close event log: %w", err)
	}
	raw, err := writeManifest(b.dir, Manifest{RunID: b.runID, ChainHead: b.prev, Events: b.seq,
		Capability: b.capability, ContentHash: b.contentHash, InputsDigest: b.inputsDigest, SigningKey: publicText(b.key)})
	if err == nil && b.key != nil {
		err = writeSignature(b.dir, raw, b.key)
	}
	if err == nil {
		b.publish()
	}
	return err
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".record-*.tmp")
	if err != nil {
		return fmt.Errorf("evidence: temp file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("evidence: write: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("evidence: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("evidence: close: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("evidence: chmod: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// AppendLine writes v, redacted, as one JSON line appended to the run's file
// name (for example steps.jsonl), unbuffered: a line is on disk when
// AppendLine returns. It refuses names outside the run directory and the
// bundle's own files.
func (b *Bundle) AppendLine(name string, v any) error {
	if name == "" || filepath.Base(name) != name || name == "events.jsonl" || name == "record.json" || name == ManifestFile || name == SignatureFile ||
		name == PlanFile || name == ReceiptFile || name == GateFile || name == ScreenshotDir {
		return fmt.Errorf("evidence: bad file name %q", name)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("evidence: encode %s line: %w", name, err)
	}
	raw, err = b.red.JSON(raw)
	if err != nil {
		return fmt.Errorf("evidence: redact %s line: %w", name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return fmt.Errorf("evidence: bundle closed")
	}
	f, err := os.OpenFile(filepath.Join(b.dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("evidence: open %s: %w", name, err)
	}
	defer f.Close()
	if _, err := f.Write(append(raw, '\n')); err != nil {
		return fmt.Errorf("evidence: write %s: %w", name, err)
	}
	return nil
}

// RedactRecord returns a copy of rec with every free-text field, input,
// output and returned value passed through red: the record as a caller may
// print or store it. Numbers and booleans that reveal nothing keep their
// type.
func RedactRecord(rec *domain.RunRecord, red *redact.Redactor) *domain.RunRecord {
	cp := *rec
	cp.RunID, cp.Capability, cp.BaseURL = red.String(rec.RunID), red.String(rec.Capability), red.String(rec.BaseURL)
	cp.Outcome, cp.Message = red.String(rec.Outcome), red.String(rec.Message)
	cp.Inputs, cp.Outputs = redactMap(rec.Inputs, red), redactMap(rec.Outputs, red)
	if rec.Returns != nil {
		cp.Returns = make(map[string]string, len(rec.Returns))
		for k, v := range rec.Returns {
			cp.Returns[red.String(k)] = red.String(v)
		}
	}
	cp.Steps = make([]domain.StepResult, len(rec.Steps))
	for i, s := range rec.Steps {
		s.ID, s.Message = red.String(s.ID), red.String(s.Message)
		cp.Steps[i] = s
	}
	if rec.StrategyMix != nil {
		cp.StrategyMix = make(map[domain.Strategy]int, len(rec.StrategyMix))
		maps.Copy(cp.StrategyMix, rec.StrategyMix)
	}
	if rec.Effects != nil {
		eff := *rec.Effects
		eff.Steps = slices.Clone(rec.Effects.Steps)
		cp.Effects = &eff
	}
	return &cp
}

func redactMap(m map[string]any, red *redact.Redactor) map[string]any {
	if m == nil {
		return nil
	}
	out, ok := red.Value(m).(map[string]any)
	if !ok {
		return map[string]any{"redacted": redact.Marker}
	}
	return out
}
