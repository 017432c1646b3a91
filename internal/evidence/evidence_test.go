package evidence_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/redact"
)

const genesis = "sha256:genesis"

type testBundle struct {
	root   string
	runID  string
	red    *redact.Redactor
	bundle *evidence.Bundle
}

// events returns the path of the bundle's event log.
func (tb *testBundle) events() string { return filepath.Join(tb.bundle.Dir(), "events.jsonl") }

// setup opens a fresh bundle under a temporary root; it is closed at cleanup.
func setup(tb testing.TB) *testBundle {
	tb.Helper()
	b := &testBundle{root: tb.TempDir(), runID: "run-0001", red: redact.New()}
	bundle, err := evidence.Open(b.root, b.runID, b.red)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	b.bundle = bundle
	tb.Cleanup(func() { _ = bundle.Close() })
	return b
}

// mustAppend appends e or fails.
func mustAppend(tb testing.TB, b *evidence.Bundle, e evidence.Event) {
	tb.Helper()
	if err := b.Append(e); err != nil {
		tb.Fatalf("Append(%+v): %v", e, err)
	}
}

// verifyChain reads an event log and checks, line by line, that seq counts
// from 1, prev is the previous hash (the first is "sha256:genesis"), and
// hash = "sha256:" + hex(sha256(prev + line-with-"hash":"")): the event's
// JSON exactly as written, with its hash field emptied. It also checks that
// decoding and re-encoding the event gives the same hash (so a verifier
// holding only the parsed events can check the chain). It returns the
// events.
func verifyChain(tb testing.TB, path string) []evidence.Event {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []evidence.Event
	prev := genesis
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for i := 1; sc.Scan(); i++ {
		line := sc.Bytes()
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		dec.DisallowUnknownFields()
		var e evidence.Event
		if err := dec.Decode(&e); err != nil {
			tb.Fatalf("line %d is not an event: %v\n%s", i, err, line)
		}
		if e.Seq != i {
			tb.Fatalf("line %d has seq %d", i, e.Seq)
		}
		if e.Prev != prev {
			tb.Fatalf("line %d: prev = %q, want the previous hash %q", i, e.Prev, prev)
		}
		field := []byte(`"hash":"` + e.Hash + `"`)
		if bytes.Count(line, field) != 1 {
			tb.Fatalf("line %d: hash field %s not found once", i, field)
		}
		body := bytes.Replace(line, field, []byte(`"hash":""`), 1)
		sum := sha256.Sum256(append([]byte(prev), body...))
		want := "sha256:" + hex.EncodeToString(sum[:])
		if e.Hash != want {
			tb.Fatalf("line %d: hash = %s, recomputed %s", i, e.Hash, want)
		}
		re := e
		re.Hash = ""
		reBody, err := json.Marshal(re)
		if err != nil {
			tb.Fatal(err)
		}
		if !bytes.Equal(reBody, body) {
			tb.Fatalf("line %d does not survive decode and re-encode:\n got %s\nwant %s", i, reBody, body)
		}
		prev = e.Hash
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestOpen(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	wantDir := filepath.Join(tb.root, "runs", tb.runID)
	if tb.bundle.Dir() != wantDir {
		t.Errorf("Dir() = %q, want %q", tb.bundle.Dir(), wantDir)
	}
	tests := []struct {
		name string
		path string
		dir  bool
		perm os.FileMode
	}{
		{"runs dir", filepath.Join(tb.root, "runs"), true, 0o700},
		{"run dir", wantDir, true, 0o700},
		{"event log", tb.events(), false, 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fi, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.IsDir() != tt.dir || fi.Mode().Perm() != tt.perm {
				t.Errorf("%s: dir=%v mode=%v, want dir=%v mode=%v", tt.path, fi.IsDir(), fi.Mode().Perm(), tt.dir, tt.perm)
			}
		})
	}
}

func TestOpenRefusesBadRunID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		runID string
	}{
		{"empty", ""},
		{"parent traversal", "../x"},
		{"deep traversal", "../../etc"},
		{"subdirectory", "a/b"},
		{"absolute", "/tmp/x"},
		{"trailing slash", "x/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			b, err := evidence.Open(filepath.Join(root, "data"), tt.runID, redact.New())
			if err == nil {
				b.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tt.runID)
			}
			assertNoEventLogs(t, root)
		})
	}
}

func TestOpenRefusesDotRunIDs(t *testing.T) {
	t.Parallel()
	_ = (`fixed: evidence.Open accepted the run ids "." and "..": its check filepath.Base(runID) != runID passes ` +
		`for both, so "." writes <root>/runs/events.jsonl and ".." writes <root>/events.jsonl, outside runs/ ` +
		`(evidence.go Open; refuse "." and ".." or require a safe character set).`)
	for _, id := range []string{".", ".."} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			b, err := evidence.Open(filepath.Join(root, "data"), id, redact.New())
			if err == nil {
				b.Close()
				t.Errorf("Open(%q) succeeded and wrote %s", id, filepath.Join(b.Dir(), "events.jsonl"))
			}
		})
	}
}

// assertNoEventLogs fails if an events.jsonl exists anywhere under root.
func assertNoEventLogs(tb testing.TB, root string) {
	tb.Helper()
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "events.jsonl" {
			tb.Errorf("an event log was created at %s", p)
		}
		return nil
	})
}

func TestOpenRefusesExistingRun(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	mustAppend(t, tb.bundle, evidence.Event{Type: "run_started"})
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(tb.events())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := evidence.Open(tb.root, tb.runID, tb.red); err == nil {
		b.Close()
		t.Fatal("Open of an existing run succeeded")
	}
	after, err := os.ReadFile(tb.events())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("re-opening an existing run changed its event log")
	}
	other, err := evidence.Open(tb.root, "run-0002", tb.red)
	if err != nil {
		t.Fatalf("Open of a second run beside the first: %v", err)
	}
	other.Close()
}

func TestAppendChainsHashes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []evidence.Event
	}{
		{"one event", []evidence.Event{{Type: "run_started", At: "2026-01-02T03:04:05Z"}}},
		{
			"several with data",
			[]evidence.Event{
				{Type: "run_started", At: "2026-01-02T03:04:05Z", Actor: domain.ActorAutomation},
				{Type: "action_dispatched", StepID: "login", Actor: domain.ActorAutomation, Data: map[string]any{
					"action": "click", "epoch": uint64(1), "duration_ms": int64(12), "risk": "safe",
				}},
				{Type: "step", Data: map[string]any{"nested": map[string]any{"list": []any{1, "two", true, nil}, "f": 1.5}}},
				{Type: "html-ish", Data: map[string]any{"s": `<a href="x">&</a> "quoted" \ back`}},
				{Type: "run_finished", Data: map[string]any{}},
			},
		},
		{"empty type", []evidence.Event{{}, {}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			for _, e := range tt.events {
				e.Seq, e.Prev, e.Hash = 99, "forged", "forged" // the bundle owns these
				mustAppend(t, tb.bundle, e)
			}
			if err := tb.bundle.Close(); err != nil {
				t.Fatal(err)
			}
			got := verifyChain(t, tb.events())
			if len(got) != len(tt.events) {
				t.Fatalf("%d events in the log, want %d", len(got), len(tt.events))
			}
			for i, e := range got {
				if e.Type != tt.events[i].Type || e.StepID != tt.events[i].StepID || e.At != tt.events[i].At {
					t.Errorf("event %d = %+v, want %+v", i+1, e, tt.events[i])
				}
			}
		})
	}
}

func TestVerifyChainDetectsTampering(t *testing.T) {
	t.Parallel()
	// A check of the checker: the chain recomputation must notice an edit.
	tb := setup(t)
	for _, typ := range []string{"a", "b", "c"} {
		mustAppend(t, tb.bundle, evidence.Event{Type: typ, Data: map[string]any{"amount": "10"}})
	}
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(tb.events())
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(raw, []byte(`"amount":"10"`), []byte(`"amount":"99"`), 1)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	ft := &fakeTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		verifyChain(ft, path)
	}()
	if !ft.failed {
		t.Error("verifyChain accepted a tampered log")
	}
}

// fakeTB records a failure instead of failing the test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatal(...any)          { f.failed = true; panic("fatal") }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true; panic("fatal") }

func TestCloseFlushesAndIsIdempotent(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	mustAppend(t, tb.bundle, evidence.Event{Type: "a"})
	if raw, _ := os.ReadFile(tb.events()); len(raw) != 0 {
		t.Logf("event written before Sync/Close (%d bytes); buffering is an optimisation, not a contract", len(raw))
	}
	if err := tb.bundle.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := verifyChain(t, tb.events()); len(got) != 1 {
		t.Fatalf("%d events after Close, want 1", len(got))
	}
	for i := range 3 {
		if err := tb.bundle.Close(); err != nil {
			t.Errorf("Close #%d: %v", i+2, err)
		}
	}
	if err := tb.bundle.Sync(); err != nil {
		t.Errorf("Sync after Close: %v", err)
	}
	if err := tb.bundle.Append(evidence.Event{Type: "late"}); err == nil {
		t.Error("Append after Close succeeded")
	}
	if got := verifyChain(t, tb.events()); len(got) != 1 {
		t.Errorf("%d events after a refused Append, want 1", len(got))
	}
}

func TestSyncFlushes(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	for range 3 {
		mustAppend(t, tb.bundle, evidence.Event{Type: "x"})
	}
	if err := tb.bundle.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := verifyChain(t, tb.events()); len(got) != 3 {
		t.Fatalf("%d events after Sync, want 3", len(got))
	}
	mustAppend(t, tb.bundle, evidence.Event{Type: "y"})
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	if got := verifyChain(t, tb.events()); len(got) != 4 || got[3].Type != "y" {
		t.Fatalf("after Close: %+v", got)
	}
}

// secret is a registered literal with characters that JSON, HTML and URL
// encoders escape.
const secret = `Hunter2<&>"pw"/ß`

// leaks returns the spellings of secret that must never reach a file.
func leaks() []string {
	js, _ := json.Marshal(secret)
	return []string{secret, string(js[1 : len(js)-1]), url.QueryEscape(secret), "Hunter2"}
}

func assertNoSecret(tb testing.TB, path string) {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range leaks() {
		if bytes.Contains(raw, []byte(l)) {
			tb.Errorf("%s contains %q:\n%s", filepath.Base(path), l, raw)
		}
	}
}

func TestEventsNeverHoldASecret(t *testing.T) {
	t.Parallel()
	type payload struct {
		Note  string            `json:"note"`
		Inner map[string]string `json:"inner"`
	}
	tests := []struct {
		name string
		e    evidence.Event
	}{
		{"top-level string", evidence.Event{Type: "t", Data: map[string]any{"value": secret}}},
		{"inside text", evidence.Event{Type: "t", Data: map[string]any{"error": "login as bob with " + secret + " refused"}}},
		{"nested map", evidence.Event{Type: "t", Data: map[string]any{"a": map[string]any{"b": map[string]any{"c": "x" + secret + "y"}}}}},
		{"list", evidence.Event{Type: "t", Data: map[string]any{"list": []any{"ok", secret, []any{secret}}}}},
		{"map of strings", evidence.Event{Type: "t", Data: map[string]any{"headers": map[string]string{"X": secret}}}},
		{"string slice", evidence.Event{Type: "t", Data: map[string]any{"args": []string{"--pw", secret}}}},
		{"struct", evidence.Event{Type: "t", Data: map[string]any{"p": payload{Note: secret, Inner: map[string]string{"k": secret}}}}},
		{"pointer to struct", evidence.Event{Type: "t", Data: map[string]any{"a": &domain.Action{Type: domain.ActType, Value: domain.Lit(secret)}}}},
		{"key", evidence.Event{Type: "t", Data: map[string]any{secret: "v"}}},
		{"sensitive key", evidence.Event{Type: "t", Data: map[string]any{"password": "Hunter2-unregistered"}}},
		{"step id", evidence.Event{Type: "t", StepID: "step-" + secret}},
		{"type", evidence.Event{Type: secret}},
		{"at", evidence.Event{Type: "t", At: secret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			tb.red.RegisterLiteral(secret)
			mustAppend(t, tb.bundle, evidence.Event{Type: "before"})
			mustAppend(t, tb.bundle, tt.e)
			mustAppend(t, tb.bundle, evidence.Event{Type: "after"})
			if err := tb.bundle.Close(); err != nil {
				t.Fatal(err)
			}
			assertNoSecret(t, tb.events())
			if got := verifyChain(t, tb.events()); len(got) != 3 {
				t.Fatalf("%d events, want 3", len(got))
			}
			if raw, _ := os.ReadFile(tb.events()); !bytes.Contains(raw, []byte(redact.Marker)) {
				t.Errorf("no %s marker in the log:\n%s", redact.Marker, raw)
			}
		})
	}
}

func TestAppendDoesNotModifyCallerData(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.red.RegisterLiteral(secret)
	data := map[string]any{"value": secret, "n": map[string]any{"v": secret}}
	mustAppend(t, tb.bundle, evidence.Event{Type: "t", Data: data})
	if data["value"] != secret || data["n"].(map[string]any)["v"] != secret {
		t.Errorf("Append redacted the caller's map in place: %v", data)
	}
}

func TestWriteRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rec  *domain.RunRecord
	}{
		{"minimal", &domain.RunRecord{SchemaVersion: 1, RunID: "run-0001", Status: domain.StatusSuccess}},
		{
			"secrets everywhere",
			&domain.RunRecord{
				SchemaVersion: 1, RunID: "run-0001", Capability: "bank.login@1.0.0",
				Status: domain.StatusFailed, ExitCode: 1, FailureCode: domain.CodeSurfaceError,
				Message: "typed " + secret + " into Password",
				Inputs: map[string]any{
					"user": "bob", "pass": secret,
					"nested": map[string]any{"deep": []any{"x", map[string]any{"v": secret}}},
				},
				Outputs: map[string]any{"echo": secret},
				Returns: map[string]string{"r": secret},
				Steps:   []domain.StepResult{{ID: "pw", Action: domain.ActType, Status: "failed", Message: secret}},
				BaseURL: "http://127.0.0.1/?pw=" + url.QueryEscape(secret),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			tb.red.RegisterLiteral(secret)
			for i := range 2 { // writing twice replaces the record
				if err := tb.bundle.WriteRecord(tt.rec); err != nil {
					t.Fatalf("WriteRecord #%d: %v", i+1, err)
				}
			}
			path := filepath.Join(tb.bundle.Dir(), "record.json")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("record.json mode = %v, want 0600", fi.Mode().Perm())
			}
			assertNoSecret(t, path)
			raw, _ := os.ReadFile(path)
			var back domain.RunRecord
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatalf("record.json does not parse: %v\n%s", err, raw)
			}
			if back.RunID != tt.rec.RunID || back.Status != tt.rec.Status || back.ExitCode != tt.rec.ExitCode {
				t.Errorf("record = %+v", back)
			}
			if tt.rec.Inputs != nil && back.Inputs["user"] != "bob" {
				t.Errorf("a harmless input was lost: %v", back.Inputs)
			}
			entries, err := os.ReadDir(tb.bundle.Dir())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{"events.jsonl", "record.json"}) {
				t.Errorf("run dir holds %q, want only events.jsonl and record.json (no temp files)", names)
			}
		})
	}
}

func TestWriteRecordDoesNotTouchTheChain(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	mustAppend(t, tb.bundle, evidence.Event{Type: "a"})
	if err := tb.bundle.WriteRecord(&domain.RunRecord{RunID: tb.runID}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, tb.bundle, evidence.Event{Type: "b"})
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	if got := verifyChain(t, tb.events()); len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
}

func TestConcurrentAppend(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := tb.bundle.Append(evidence.Event{Type: "e", Data: map[string]any{"w": w, "i": i}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	got := verifyChain(t, tb.events())
	if len(got) != workers*each {
		t.Fatalf("%d events, want %d", len(got), workers*each)
	}
	seen := map[string]bool{}
	for _, e := range got {
		k := e.Data["w"].(json.Number).String() + "/" + e.Data["i"].(json.Number).String()
		if seen[k] {
			t.Fatalf("event %s written twice", k)
		}
		seen[k] = true
	}
}

// TestCloseRacingAppendLosesNothing appends from several goroutines while
// another closes the bundle: every Append that returned nil must be in the
// log.
func TestCloseRacingAppendLosesNothing(t *testing.T) {
	t.Parallel()
	_ = ("fixed: Bundle.Close was not atomic: it calls Sync (flush, unlock) and then re-locks to close the file, " +
		"so an Append that runs between the two returns nil but is buffered and dropped when Close sets w=nil and " +
		"closes the file without flushing again (evidence.go Close; flush under the same lock that closes).")
	for round := range 200 {
		root := t.TempDir()
		b, err := evidence.Open(root, "r", redact.New())
		if err != nil {
			t.Fatal(err)
		}
		var ok sync.WaitGroup
		var mu sync.Mutex
		accepted := 0
		start := make(chan struct{})
		for range 4 {
			ok.Add(1)
			go func() {
				defer ok.Done()
				<-start
				for {
					if b.Append(evidence.Event{Type: "e"}) != nil {
						return
					}
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			}()
		}
		close(start)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		ok.Wait()
		raw, err := os.ReadFile(filepath.Join(b.Dir(), "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(raw), "\n"); lines != accepted {
			t.Fatalf("round %d: %d Appends returned nil but the log holds %d events", round, accepted, lines)
		}
	}
}

// TestRedactionKeepsTheChainVerifiable: events.jsonl is redacted as raw
// bytes after the hash is computed, hash and prev fields included.
func TestRedactionKeepsTheChainVerifiable(t *testing.T) {
	t.Parallel()
	_ = ("fixed: Bundle.Append redacted each whole line with Redactor.Bytes, including the prev and hash fields " +
		"and the numeric seq: a registered literal that occurs in a hex hash (any hex-looking secret, or a " +
		"numeric PIN that happens to appear in a later hash) turns hash/prev into \"...[REDACTED]...\" and the " +
		"chain no longer verifies; a numeric literal equal to a seq (a 3-digit PIN and event #123) makes the line " +
		"invalid JSON (\"seq\":[REDACTED]). Redact the content fields (type, step_id, at, data) and leave " +
		"seq/prev/hash alone (evidence.go Append).")
	t.Run("literal inside a hash", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		mustAppend(t, tb.bundle, evidence.Event{Type: "first"})
		if err := tb.bundle.Sync(); err != nil {
			t.Fatal(err)
		}
		first := verifyChain(t, tb.events())[0]
		tb.red.RegisterLiteral(strings.TrimPrefix(first.Hash, "sha256:")[10:22]) // a hex-looking secret
		mustAppend(t, tb.bundle, evidence.Event{Type: "second"})
		if err := tb.bundle.Close(); err != nil {
			t.Fatal(err)
		}
		verifyChain(t, tb.events())
	})
	t.Run("numeric literal equal to a seq", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		tb.red.RegisterLiteral("123")
		for range 130 {
			mustAppend(t, tb.bundle, evidence.Event{Type: "e"})
		}
		if err := tb.bundle.Close(); err != nil {
			t.Fatal(err)
		}
		verifyChain(t, tb.events())
	})
}

func TestAppendRefusesUnencodableData(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	mustAppend(t, tb.bundle, evidence.Event{Type: "a"})
	if err := tb.bundle.Append(evidence.Event{Type: "bad", Data: map[string]any{"ratio": math.NaN()}}); err == nil {
		t.Fatal("Append of a NaN succeeded")
	}
	mustAppend(t, tb.bundle, evidence.Event{Type: "b"})
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(tb.events())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(raw), "\n") != 2 || strings.Contains(string(raw), `"bad"`) {
		t.Fatalf("log after a refused Append:\n%s", raw)
	}
}

// TestRefusedAppendLeavesNoSeqGap: a refused Append must not consume a
// sequence number, or the log shows a gap where no event was ever lost.
func TestRefusedAppendLeavesNoSeqGap(t *testing.T) {
	t.Parallel()
	_ = ("fixed: Bundle.Append incremented seq before encoding; when json.Marshal fails (a NaN or ±Inf " +
		"float in Data) it returns the error but keeps the incremented seq, so the next event is written " +
		"with seq 3 after seq 1 and the log looks as if event 2 had been deleted (evidence.go Append; " +
		"increment only after a successful encode).")
	tb := setup(t)
	mustAppend(t, tb.bundle, evidence.Event{Type: "a"})
	_ = tb.bundle.Append(evidence.Event{Type: "bad", Data: map[string]any{"ratio": math.Inf(1)}})
	mustAppend(t, tb.bundle, evidence.Event{Type: "b"})
	if err := tb.bundle.Close(); err != nil {
		t.Fatal(err)
	}
	verifyChain(t, tb.events())
}
