package cassette_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/cassette"
	"github.com/cuahq/cua/internal/model/modeltest"
)

var update = flag.Bool("update", false, "rewrite the golden cassettes under testdata/")

// script is a live model stand-in answering from a list, in order.
type script struct {
	mu      sync.Mutex
	answers []answer
	seen    []model.Request
}

type answer struct {
	resp model.Response
	err  error
}

var _ model.Model = (*script)(nil)

func (s *script) ID() string          { return "script:v1" }
func (s *script) RequiresFrame() bool { return false }

func (s *script) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, req)
	if len(s.answers) == 0 {
		return model.Response{}, errors.New("script: no answer left")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a.resp, a.err
}

// session is a small discovery run: three decides (one with a screenshot,
// one answered in prose and corrected), an outage, and an audit.
func session() ([]model.Request, []answer) {
	decide := modeltest.NewRequest()
	framed := modeltest.NewRequest()
	framed.Screenshot = modeltest.Screenshot
	framed.Observation += "\n[4] link \"Back <to list>\""
	corrected := framed
	corrected.Corrective = "Your previous answer was refused: invalid JSON. Answer again with one JSON object that satisfies the contract."
	audit := modeltest.NewRequest()
	audit.Purpose = "audit"
	audit.System = "You audit a claim that a goal was reached."
	audit.Context = []string{"Claim: the record was saved"}
	audit.Contract = json.RawMessage(`{"type": "object", "properties": {"verdict": {"enum": ["confirmed", "rejected"]}}}`)

	reqs := []model.Request{decide, framed, corrected, decide, audit}
	answers := []answer{
		{resp: model.Response{Turn: json.RawMessage(modeltest.ValidTurn), Usage: model.Usage{InputTokens: 812, OutputTokens: 40}, Model: "gpt-test-2025"}},
		{resp: model.Response{Turn: json.RawMessage("I would click Save."), Usage: model.Usage{InputTokens: 900, OutputTokens: 12}, Model: "gpt-test-2025"}},
		{resp: model.Response{Turn: json.RawMessage("{\n  \"action\": \"finish\", \"element\": 1,\n  \"reason\": \"saved\"\n}"), Usage: model.Usage{InputTokens: 950, OutputTokens: 30}, Model: "gpt-test-2025"}},
		{err: fmt.Errorf("openai: %w: HTTP 503 after 2 retries: overloaded", model.ErrUnavailable)},
		{resp: model.Response{Turn: json.RawMessage(`{"verdict":"confirmed"}`), Usage: model.Usage{InputTokens: 300, OutputTokens: 5}, Model: "gpt-test-2025"}},
	}
	return reqs, answers
}

// run sends reqs to m and returns what came back.
func run(tb testing.TB, m model.Model, reqs []model.Request) []answer {
	tb.Helper()
	var out []answer
	for _, r := range reqs {
		resp, err := m.Decide(tb.Context(), r)
		out = append(out, answer{resp: resp, err: err})
	}
	return out
}

func recordSession(tb testing.TB, path string) []answer {
	tb.Helper()
	reqs, answers := session()
	rec := cassette.Record(&script{answers: answers}, path, nil)
	got := run(tb, rec, reqs)
	if rec.Len() != len(reqs) {
		tb.Fatalf("recorded %d exchanges, want %d", rec.Len(), len(reqs))
	}
	return got
}

func TestGolden(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "session.json")
	recordSession(t, path)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "session.cassette.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("recorded cassette differs from %s (run with -update if the change is intended):\n%s", golden, got)
	}
}

// Recording the same exchanges, live or replayed, makes the same bytes.
func TestRecordReplayRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live := filepath.Join(dir, "live.json")
	liveAnswers := recordSession(t, live)

	again := filepath.Join(dir, "again.json")
	recordSession(t, again)

	p, err := cassette.Open(live)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if p.ID() != "cassette:script:v1" {
		t.Errorf("ID() = %q", p.ID())
	}
	replayed := filepath.Join(dir, "replayed.json")
	reqs, _ := session()
	replayAnswers := run(t, cassette.Record(p, replayed, nil), reqs)
	if p.Remaining() != 0 {
		t.Errorf("Remaining() = %d after the whole session", p.Remaining())
	}

	a, _ := os.ReadFile(live)
	for _, other := range []string{again, replayed} {
		b, _ := os.ReadFile(other)
		if !bytes.Equal(a, b) {
			t.Errorf("%s is not byte-identical to %s", filepath.Base(other), filepath.Base(live))
		}
	}

	for i := range liveAnswers {
		l, r := liveAnswers[i], replayAnswers[i]
		if (l.err == nil) != (r.err == nil) || errors.Is(l.err, model.ErrUnavailable) != errors.Is(r.err, model.ErrUnavailable) {
			t.Errorf("exchange %d: live error %v, replayed error %v", i+1, l.err, r.err)
			continue
		}
		if l.err != nil {
			continue
		}
		if compact(l.resp.Turn) != string(r.resp.Turn) || l.resp.Usage != r.resp.Usage || l.resp.Model != r.resp.Model {
			t.Errorf("exchange %d: live %s %+v %q, replayed %s %+v %q", i+1,
				l.resp.Turn, l.resp.Usage, l.resp.Model, r.resp.Turn, r.resp.Usage, r.resp.Model)
		}
	}
	if string(replayAnswers[1].resp.Turn) != "I would click Save." {
		t.Errorf("a turn that is not JSON replays as %q", replayAnswers[1].resp.Turn)
	}

	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("directory holds %d files, want 3 (no temporary files left)", len(entries))
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Each exchange is on disk, whole, as soon as it returns.
func TestWrittenPerExchange(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cassettes", "c.json") // the directory is made
	reqs, answers := session()
	rec := cassette.Record(&script{answers: answers}, path, nil)
	for i, r := range reqs[:3] {
		if _, err := rec.Decide(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		p, err := cassette.Open(path)
		if err != nil {
			t.Fatalf("after exchange %d: Open: %v", i+1, err)
		}
		if p.Remaining() != i+1 {
			t.Errorf("after exchange %d the file holds %d", i+1, p.Remaining())
		}
	}
}

func TestCanceledCallNotRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.json")
	rec := cassette.Record(&script{}, path, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := rec.Decide(ctx, modeltest.NewRequest()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Decide = %v", err)
	}
	if rec.Len() != 0 {
		t.Errorf("a canceled call was recorded")
	}
}

func TestMismatch(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.json")
	recordSession(t, path)

	tests := []struct {
		name   string
		change func(*model.Request)
		want   string // in the error; empty means a match
	}{
		{"observation", func(r *model.Request) { r.Observation = strings.Replace(r.Observation, "Save", "Submit", 1) }, `observation differs at byte`},
		{"goal", func(r *model.Request) { r.Goal += "!" }, "goal differs at byte"},
		{"goal names the one that replays", func(r *model.Request) { r.Goal = "x" }, "(this cassette replays only --goal "},
		{"system", func(r *model.Request) { r.System = "Be brief." }, "system differs at byte 0"},
		{"context entry", func(r *model.Request) { r.Context = append(r.Context, "Notice: stuck") }, "context has 3 entries, recorded 2"},
		{"context text", func(r *model.Request) { r.Context[0] = "Budget: step 3 of 20." }, "context[0] differs"},
		{"contract", func(r *model.Request) { r.Contract = json.RawMessage(`{"type":"object"}`) }, "contract differs"},
		{"corrective", func(r *model.Request) { r.Corrective = "Try again." }, "corrective differs"},
		{"purpose", func(r *model.Request) { r.Purpose = "audit" }, "purpose differs"},
		{"screenshot is not compared", func(r *model.Request) { r.Screenshot = []byte("another frame") }, ""},
		{"contract layout is not compared", func(r *model.Request) {
			var v any
			_ = json.Unmarshal(r.Contract, &v)
			r.Contract, _ = json.MarshalIndent(v, "", "    ") // keys reordered, reindented
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := cassette.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			reqs, _ := session()
			if _, err := p.Decide(t.Context(), reqs[0]); err != nil {
				t.Fatalf("exchange 1: %v", err)
			}
			req := reqs[1]
			req.Context = append([]string(nil), req.Context...)
			tc.change(&req)
			_, err = p.Decide(t.Context(), req)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Decide = %v, want a match", err)
				}
				return
			}
			if !errors.Is(err, model.ErrMismatch) {
				t.Fatalf("Decide = %v, want ErrMismatch", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "exchange 2 of 5") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not name exchange 2 of 5 and %q", msg, tc.want)
			}
			// A mismatch does not advance: the right request still replays.
			if _, err := p.Decide(t.Context(), reqs[1]); err != nil {
				t.Errorf("the recorded request after a mismatch: %v", err)
			}
		})
	}
}

func TestPastTheEnd(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.json")
	recordSession(t, path)
	p, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := session()
	run(t, p, reqs)
	_, err = p.Decide(t.Context(), reqs[0])
	if !errors.Is(err, model.ErrMismatch) || !strings.Contains(err.Error(), "past the end") {
		t.Fatalf("Decide past the end = %v, want ErrMismatch naming the end", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	recordSession(t, good)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		data string
		want string
	}{
		{"not JSON", "exchanges:\n", "not a cassette"},
		{"other format", `{"format":"vcr/2","exchanges":[]}`, `format "vcr/2"`},
		{"hand edit", strings.Replace(string(data), "Member M-1042", "Member M-1043", 1), "does not match its request"},
		{"contract edit", strings.Replace(string(data), `"rejected"`, `"refuted"`, 1), "does not match its content"},
		{"missing contract", `{"format":"cua.cassette/v1","exchanges":[{"digest":"x","request":{"contract":"sha256:00"},"response":{}}]}`, "is not in the cassette"},
		{"neither response nor error", `{"format":"cua.cassette/v1","exchanges":[{"digest":"x","request":{}}]}`, "exactly one of response and error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "c.json")
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := cassette.Open(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want %q", err, tc.want)
			}
		})
	}

	if _, err := cassette.Open(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file = %v, want os.ErrNotExist", err)
	}
}

// A value registered with the redactor never reaches the cassette, from
// the request, the screenshot, the answer or an error; replay with the
// same redactor still matches.
func TestRedaction(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-7f3e-do-not-leak"
	redact := func(s string) string { return strings.ReplaceAll(s, canary, "[redacted]") }

	req := modeltest.NewRequest()
	req.System += " Operator token " + canary
	req.Goal += " with password " + canary
	req.Context = append(req.Context, "Notice: typed "+canary)
	req.Observation += "\n[5] textbox \"Password\" value=\"" + canary + "\""
	req.Corrective = "Do not repeat " + canary
	req.Screenshot = []byte("\x89PNG " + canary)
	req.Contract = json.RawMessage(`{"type":"object","description":"` + canary + `"}`)
	req2 := req
	req2.Corrective = "again " + canary

	answers := []answer{
		{resp: model.Response{Turn: json.RawMessage(`{"action":"type","text":"` + canary + `"}`), Model: "m-" + canary}},
		{err: fmt.Errorf("openai: HTTP 400: prompt contains %s", canary)},
	}
	path := filepath.Join(t.TempDir(), "c.json")
	rec := cassette.Record(&script{answers: answers}, path, redact)
	live, err := rec.Decide(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(live.Turn), canary) {
		t.Error("the live answer was altered; only the cassette is redacted")
	}
	if _, err := rec.Decide(t.Context(), req2); err == nil {
		t.Fatal("want the scripted error")
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(canary)) {
		t.Fatalf("the canary is in the cassette:\n%s", data)
	}
	if !bytes.Contains(data, []byte("[redacted]")) {
		t.Error("no redaction marker in the cassette")
	}

	p, err := cassette.Open(path, cassette.WithRedact(redact))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Decide(t.Context(), req)
	if err != nil {
		t.Fatalf("replay with the recorder's redactor: %v", err)
	}
	if strings.Contains(string(resp.Turn), canary) {
		t.Error("the replayed turn carries the canary")
	}
}
