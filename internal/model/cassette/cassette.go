// Package cassette records a model's exchanges to a file and replays them
// with no network: a [Recorder] wraps a live [model.Model] and saves every
// exchange, redacted, as it happens; a [Player] answers the same requests,
// in the same order, from the file. Cassettes are goldens: the same
// exchanges always make a byte-identical file.
//
// # File format
//
// One indented JSON document (format "cua.cassette/v1"), rewritten
// atomically after each exchange:
//
//	{
//	  "format": "cua.cassette/v1",
//	  "model": "openai:gpt-4.1-mini",
//	  "contracts": {
//	    "sha256:…": {"type": "object", …}
//	  },
//	  "exchanges": [
//	    {
//	      "digest": "sha256:…",
//	      "request": {
//	        "purpose": "decide",
//	        "system": "…", "goal": "…", "context": ["…"], "observation": "…",
//	        "contract": "sha256:…", "corrective": "…",
//	        "screenshot_sha256": "…"
//	      },
//	      "response": {"turn": {…}, "usage": {"input_tokens": 812, "output_tokens": 40}, "model": "gpt-4.1-mini-2025-04-14"}
//	    },
//	    {"digest": "sha256:…", "request": {…}, "error": {"message": "…", "unavailable": true}}
//	  ]
//	}
//
// Every text (request fields, contract, turn, error message) passes
// through the recorder's redact function before it is written; the
// screenshot is replaced by its sha256. Each distinct contract is stored
// once under the sha256 of its RFC 8785 form, which the request names (a
// contract that is not JSON is stored as a JSON string). A turn that is
// not JSON is kept as a string in "turn_text". "digest" is the sha256 of
// the request's canonical form: purpose, system, goal, context,
// observation, contract reference and corrective, length-prefixed, in that
// order; not the screenshot.
package cassette

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/model"
	"github.com/gowebpki/jcs"
)

// Format names the file format this package reads and writes.
const Format = "cua.cassette/v1"

// document is the cassette file.
type document struct {
	Format    string                     `json:"format"`
	Model     string                     `json:"model"`
	Contracts map[string]json.RawMessage `json:"contracts,omitempty"`
	Exchanges []exchange                 `json:"exchanges"`
}

// exchange is one request and what came back: a response or an error.
type exchange struct {
	Digest   string    `json:"digest"`
	Request  request   `json:"request"`
	Response *response `json:"response,omitempty"`
	Error    *failure  `json:"error,omitempty"`
}

// request is a model.Request as recorded: redacted, screenshot hashed.
type request struct {
	Purpose          string   `json:"purpose"`
	System           string   `json:"system"`
	Goal             string   `json:"goal"`
	Context          []string `json:"context,omitempty"`
	Observation      string   `json:"observation"`
	Contract         string   `json:"contract,omitempty"`
	Corrective       string   `json:"corrective,omitempty"`
	ScreenshotSHA256 string   `json:"screenshot_sha256,omitempty"`
}

type response struct {
	Turn     json.RawMessage `json:"turn,omitempty"`
	TurnText *string         `json:"turn_text,omitempty"`
	Usage    model.Usage     `json:"usage"`
	Model    string          `json:"model"`
}

type failure struct {
	Message     string `json:"message"`
	Unavailable bool   `json:"unavailable,omitempty"`
}

func identity(s string) string { return s }

// record turns req into its recorded form and returns its contract, also
// redacted, with the reference the request holds.
func record(req model.Request, redact func(string) string) (request, json.RawMessage) {
	r := request{
		Purpose:     redact(req.Purpose),
		System:      redact(req.System),
		Goal:        redact(req.Goal),
		Observation: redact(req.Observation),
		Corrective:  redact(req.Corrective),
	}
	for _, c := range req.Context {
		r.Context = append(r.Context, redact(c))
	}
	var contract json.RawMessage
	if len(req.Contract) > 0 {
		contract = canonical(redact(string(req.Contract)))
		sum := sha256.Sum256(contract)
		r.Contract = "sha256:" + hex.EncodeToString(sum[:])
	}
	if len(req.Screenshot) > 0 {
		sum := sha256.Sum256(req.Screenshot)
		r.ScreenshotSHA256 = hex.EncodeToString(sum[:])
	}
	return r, contract
}

// canonical returns the RFC 8785 form of s, or of s as a JSON string when
// s is not JSON.
func canonical(s string) json.RawMessage {
	if c, err := jcs.Transform([]byte(s)); err == nil {
		return c
	}
	q, _ := json.Marshal(s)
	return q
}

// jsonOrText returns s compacted when it is JSON, else s as text.
func jsonOrText(s string) (json.RawMessage, *string) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, &s
	}
	return json.RawMessage(b.Bytes()), nil
}

// digest is the sha256 of r's canonical form (not the screenshot).
func (r request) digest() string {
	h := sha256.New()
	field := func(name, v string) {
		h.Write([]byte(name + " " + strconv.Itoa(len(v)) + "\n" + v + "\n"))
	}
	field("purpose", r.Purpose)
	field("system", r.System)
	field("goal", r.Goal)
	field("context", strconv.Itoa(len(r.Context)))
	for _, c := range r.Context {
		field("-", c)
	}
	field("observation", r.Observation)
	field("contract", r.Contract)
	field("corrective", r.Corrective)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// encode renders doc: indented, no HTML escaping, one trailing newline.
func encode(doc document) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, then renamed over it. It creates the directory.
func writeAtomic(path string, data []byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Recorder is a model.Model that passes each request to a live model and
// saves the exchange. It is safe for concurrent use; exchanges are saved
// in the order they complete.
type Recorder struct {
	inner  model.Model
	path   string
	redact func(string) string

	mu  sync.Mutex
	doc document
}

var _ model.Model = (*Recorder)(nil)

// Record returns a Recorder in front of inner that writes the cassette to
// path, replacing any file there at the first exchange. redact is applied
// to every text before it is written; nil means none.
func Record(inner model.Model, path string, redact func(string) string) *Recorder {
	if redact == nil {
		redact = identity
	}
	return &Recorder{
		inner:  inner,
		path:   path,
		redact: redact,
		doc:    document{Format: Format, Model: recordedID(inner), Exchanges: []exchange{}},
	}
}

// recordedID is the id a cassette names: a replayed cassette's own.
func recordedID(m model.Model) string {
	if p, ok := m.(*Player); ok {
		return p.doc.Model
	}
	return m.ID()
}

// ID returns the live model's id.
func (r *Recorder) ID() string { return r.inner.ID() }

// RequiresFrame returns the live model's answer.
func (r *Recorder) RequiresFrame() bool { return r.inner.RequiresFrame() }

// Len returns how many exchanges were recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.doc.Exchanges)
}

// Decide asks the live model and saves the exchange, then returns the live
// answer unchanged. A failed call is saved too (its message redacted),
// unless ctx ended. It returns the live model's error, or an error when
// the cassette cannot be written.
func (r *Recorder) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := r.inner.Decide(ctx, req)
	if err != nil && ctx.Err() != nil {
		return resp, err
	}
	rq, contract := record(req, r.redact)
	ex := exchange{Request: rq, Digest: rq.digest()}
	if err != nil {
		ex.Error = &failure{Message: r.redact(err.Error()), Unavailable: errors.Is(err, model.ErrUnavailable)}
	} else {
		rr := &response{Usage: resp.Usage, Model: r.redact(resp.Model)}
		rr.Turn, rr.TurnText = jsonOrText(r.redact(string(resp.Turn)))
		ex.Response = rr
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.doc.Exchanges = append(r.doc.Exchanges, ex)
	if contract != nil {
		if r.doc.Contracts == nil {
			r.doc.Contracts = map[string]json.RawMessage{}
		}
		r.doc.Contracts[rq.Contract] = contract
	}
	data, encErr := encode(r.doc)
	if encErr == nil {
		encErr = writeAtomic(r.path, data)
	}
	if encErr != nil {
		return model.Response{}, fmt.Errorf("cassette: write %s: %w", r.path, encErr)
	}
	return resp, err
}

// Player is a model.Model that answers from a cassette, in order, with no
// network. It is safe for concurrent use, though the order of concurrent
// requests is whatever order they arrive in.
type Player struct {
	path   string
	redact func(string) string

	mu   sync.Mutex
	doc  document
	next int
}

var _ model.Model = (*Player)(nil)

// Option configures [Open].
type Option func(*Player)

// WithRedact applies redact to each live request before comparing it with
// the recording: pass the recorder's redact function when it did more than
// the caller's redactor already does.
func WithRedact(redact func(string) string) Option {
	return func(p *Player) {
		if redact != nil {
			p.redact = redact
		}
	}
}

// Open reads the cassette at path. It returns an error when the file
// cannot be read, is not a cassette of this format, or holds an exchange
// whose digest does not match its request (a hand edit).
func Open(path string, opts ...Option) (*Player, error) {
	data, err := fsx.ReadFile(path, fsx.MaxCassette)
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("cassette %s: not a cassette: %w", path, err)
	}
	if doc.Format != Format {
		return nil, fmt.Errorf("cassette %s: format %q, want %q", path, doc.Format, Format)
	}
	for ref, c := range doc.Contracts {
		sum := sha256.Sum256(canonical(string(c)))
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != ref {
			return nil, fmt.Errorf("cassette %s: contract %s does not match its content (%s); was it edited by hand?", path, ref, got)
		}
	}
	for i, ex := range doc.Exchanges {
		if _, ok := doc.Contracts[ex.Request.Contract]; ex.Request.Contract != "" && !ok {
			return nil, fmt.Errorf("cassette %s: exchange %d: contract %s is not in the cassette", path, i+1, ex.Request.Contract)
		}
		if (ex.Response == nil) == (ex.Error == nil) {
			return nil, fmt.Errorf("cassette %s: exchange %d: want exactly one of response and error", path, i+1)
		}
		if got := ex.Request.digest(); got != ex.Digest {
			return nil, fmt.Errorf("cassette %s: exchange %d: digest %s does not match its request (%s); was it edited by hand?", path, i+1, ex.Digest, got)
		}
	}
	p := &Player{path: path, redact: identity, doc: doc}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// ID returns "cassette:" and the recorded model's id.
func (p *Player) ID() string { return "cassette:" + p.doc.Model }

// RequiresFrame reports false: replay compares no screenshot.
func (p *Player) RequiresFrame() bool { return false }

// Remaining returns how many recorded exchanges have not been replayed.
func (p *Player) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.doc.Exchanges) - p.next
}

// Decide replays the next exchange when req matches it. It returns an
// error wrapping [model.ErrMismatch] that names the exchange and the
// fields that differ when req does not match, or when the cassette has no
// exchange left (the cassette does not advance on a mismatch); the
// recorded error (wrapping [model.ErrUnavailable] when the original did)
// for an exchange that failed; and ctx's error when ctx has ended.
func (p *Player) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, fmt.Errorf("cassette: %w", err)
	}
	live, _ := record(req, p.redact)

	p.mu.Lock()
	defer p.mu.Unlock()
	total := len(p.doc.Exchanges)
	if p.next >= total {
		return model.Response{}, fmt.Errorf("cassette %s: %w: request %d (purpose %q) runs past the end of the cassette, which holds %d exchanges",
			p.path, model.ErrMismatch, p.next+1, live.Purpose, total)
	}
	ex := p.doc.Exchanges[p.next]
	if live.digest() != ex.Digest {
		return model.Response{}, fmt.Errorf("cassette %s: exchange %d of %d: %w: %s",
			p.path, p.next+1, total, model.ErrMismatch, describe(ex.Request, live))
	}
	p.next++
	if ex.Error != nil {
		return model.Response{}, &replayedError{message: ex.Error.Message, unavailable: ex.Error.Unavailable}
	}
	resp := model.Response{Usage: ex.Response.Usage, Model: ex.Response.Model}
	if ex.Response.TurnText != nil {
		resp.Turn = json.RawMessage(*ex.Response.TurnText)
	} else {
		resp.Turn, _ = jsonOrText(string(ex.Response.Turn))
	}
	return resp, nil
}

// replayedError is a recorded failure, replayed with its recorded message.
type replayedError struct {
	message     string
	unavailable bool
}

func (e *replayedError) Error() string { return e.message }

// Is reports a recorded outage as [model.ErrUnavailable].
func (e *replayedError) Is(target error) bool {
	return e.unavailable && target == model.ErrUnavailable
}
