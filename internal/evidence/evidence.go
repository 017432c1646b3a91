// Package evidence writes a run's evidence: the run record and the
// hash-chained event log under <data-dir>/runs/<run-id>/. Every string passes
// through the redactor before it reaches a file (DESIGN invariant 6).
package evidence

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
)

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Event is one line of events.jsonl.
type Event struct {
	Seq    int            `json:"seq"`
	At     string         `json:"at"`
	Type   string         `json:"type"`
	Actor  domain.Actor   `json:"actor,omitempty"`
	StepID string         `json:"step_id,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
	Prev   string         `json:"prev"`
	Hash   string         `json:"hash"`
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
}

// Open creates <root>/runs/<runID>/ and its event log.
func Open(root, runID string, red *redact.Redactor) (*Bundle, error) {
	if !runIDPattern.MatchString(runID) {
		return nil, fmt.Errorf("evidence: bad run id %q: want letters, digits, '.', '_' or '-', starting with a letter or digit", runID)
	}
	dir := filepath.Join(root, "runs", runID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("evidence: create run dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("evidence: create event log: %w", err)
	}
	return &Bundle{dir: dir, red: red, f: f, w: bufio.NewWriterSize(f, 64<<10), prev: "sha256:genesis"}, nil
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
	e.Type, e.At, e.StepID = b.red.String(e.Type), b.red.String(e.At), b.red.String(e.StepID)
	e.Actor = domain.Actor(b.red.String(string(e.Actor)))
	if e.Data != nil {
		data, ok := b.red.Value(e.Data).(map[string]any)
		if !ok {
			data = map[string]any{"redacted": "[REDACTED]"}
		}
		e.Data = data
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

// Close flushes and closes the event log; it is idempotent. An Append that
// returned nil before Close is on disk after it.
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
	return nil
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
	if name == "" || filepath.Base(name) != name || name == "events.jsonl" || name == "record.json" {
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
