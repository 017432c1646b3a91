package evidence_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/redact"
)

const verifyCanary = "Teller-Pass-9f3kq2zzW7"

// finishedBundle writes a real run bundle through the evidence API (five
// events, a steps file, a record) and finishes it; it returns its dir.
func finishedBundle(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	b, err := evidence.Open(root, "run-verify", redact.New(redact.WithLiterals(verifyCanary)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, p := range []evidence.Payload{
		evidence.RunStarted{Capability: "savings-lookup@1.0.0", ContentHash: "sha256:abc", BaseURL: "http://127.0.0.1:8813"},
		evidence.Recovery{Rule: "r-alpha", Remedy: "retry", Attempt: 1},
		evidence.ActionDispatched{Action: "click", Risk: "safe", Epoch: 1, URL: "http://127.0.0.1:8813/home/accounts"},
		evidence.StepFinished{Status: "passed", DurationMS: 12},
		evidence.RunFinished{Status: domain.StatusSuccess},
	} {
		if err := b.Append(evidence.NewEvent(at, domain.ActorAutomation, "s1", p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AppendLine("steps.jsonl", map[string]any{"step": "s1", "typed": verifyCanary}); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteRecord(&domain.RunRecord{RunID: "run-verify", Status: domain.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Dir()
}

func TestCloseWritesManifest(t *testing.T) {
	t.Parallel()
	dir := finishedBundle(t)
	raw, err := os.ReadFile(filepath.Join(dir, evidence.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m evidence.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest.json does not parse: %v\n%s", err, raw)
	}
	var names []string
	for name := range m.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"events.jsonl", "record.json", "steps.jsonl"}) {
		t.Errorf("manifest lists %q, want events.jsonl, record.json, steps.jsonl", names)
	}
	events, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(events), []byte("\n"))
	var last evidence.Event
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != evidence.ManifestSchemaVersion || m.RunID != "run-verify" || m.ChainHead != last.Hash || m.Events != 5 {
		t.Errorf("manifest = %+v, want run-verify, 5 events, head %s", m, last.Hash)
	}
	if fd := m.Files["events.jsonl"]; fd.Size != int64(len(events)) || len(fd.SHA256) != 64 {
		t.Errorf("events.jsonl digest = %+v, want size %d and a sha256", fd, len(events))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
}

// mutateLines rewrites events.jsonl through f over its lines.
func mutateLines(t *testing.T, dir string, f func(lines [][]byte) [][]byte) {
	t.Helper()
	p := filepath.Join(dir, "events.jsonl")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := f(bytes.SplitAfter(raw, []byte("\n"))[:5])
	if err := os.WriteFile(p, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	fragment := strings.ToUpper(verifyCanary[3:15])
	tests := []struct {
		name    string
		mutate  func(t *testing.T, dir string)
		chainOK bool
		want    []string // substrings of the reasons, each required
	}{
		{name: "untouched", mutate: func(*testing.T, string) {}, chainOK: true},
		{
			name: "one byte of one event flipped",
			mutate: func(t *testing.T, dir string) {
				mutateLines(t, dir, func(l [][]byte) [][]byte {
					l[1] = bytes.Replace(l[1], []byte("r-alpha"), []byte("r-blpha"), 1)
					return l
				})
			},
			want: []string{"events.jsonl: first broken link at line 2 (seq 2): hash does not match", "events.jsonl: sha256 or size differs"},
		},
		{
			name: "a byte flipped that breaks the JSON",
			mutate: func(t *testing.T, dir string) {
				mutateLines(t, dir, func(l [][]byte) [][]byte { l[3][0] = '['; return l })
			},
			want: []string{"first broken link at line 4 (seq 4): not an event"},
		},
		{
			name: "one event line deleted",
			mutate: func(t *testing.T, dir string) {
				mutateLines(t, dir, func(l [][]byte) [][]byte { return slices.Delete(l, 2, 3) })
			},
			want: []string{"first broken link at line 3 (seq 3): holds seq 4"},
		},
		{
			name:   "the last event line deleted",
			mutate: func(t *testing.T, dir string) { mutateLines(t, dir, func(l [][]byte) [][]byte { return l[:4] }) },
			want:   []string{"events.jsonl: chain ends at seq 4", "manifest says seq 5"},
		},
		{
			name: "two event lines swapped",
			mutate: func(t *testing.T, dir string) {
				mutateLines(t, dir, func(l [][]byte) [][]byte { l[1], l[2] = l[2], l[1]; return l })
			},
			want: []string{"first broken link at line 2 (seq 2): holds seq 3"},
		},
		{
			name: "a listed file changed",
			mutate: func(t *testing.T, dir string) {
				writeFile(t, dir, "record.json", `{"run_id":"run-verify","status":"FAILED"}`)
			},
			chainOK: true,
			want:    []string{"record.json: sha256 or size differs from the manifest"},
		},
		{
			name:    "a listed file removed",
			mutate:  func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "steps.jsonl")) },
			chainOK: true,
			want:    []string{"steps.jsonl: listed in the manifest, missing"},
		},
		{
			name:    "a stray file added",
			mutate:  func(t *testing.T, dir string) { writeFile(t, dir, "stray.txt", "hello\n") },
			chainOK: true,
			want:    []string{"stray.txt: not in the manifest"},
		},
		{
			name:   "manifest removed",
			mutate: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, evidence.ManifestFile)) },
			want:   []string{"manifest.json: missing"},
		},
		{
			name: "a canary planted",
			mutate: func(t *testing.T, dir string) {
				writeFile(t, dir, "notes.txt", "ok\nthe password is "+verifyCanary+"\n")
			},
			chainOK: true,
			want:    []string{"notes.txt:2: holds a registered secret"},
		},
		{
			name:    "a 12-char fragment of the canary, upper-cased",
			mutate:  func(t *testing.T, dir string) { writeFile(t, dir, "notes.txt", "x "+fragment+" y\n") },
			chainOK: true,
			want:    []string{"notes.txt:1: holds a registered secret"},
		},
		{
			name: "a key-shaped string planted",
			mutate: func(t *testing.T, dir string) {
				writeFile(t, dir, "notes.txt", "\n\nkey sk-"+"abcdefghij0123456789xyz\n")
			},
			chainOK: true,
			want:    []string{"notes.txt:3: holds a key-shaped string (key)"},
		},
		{
			name:    "an absolute home path planted",
			mutate:  func(t *testing.T, dir string) { writeFile(t, dir, "notes.txt", `{"cwd":"/home/alice/work"}`) },
			chainOK: true,
			want:    []string{"notes.txt:1: holds an absolute host path (/home/)"},
		},
		{
			name: "the data directory's path planted",
			mutate: func(t *testing.T, dir string) {
				writeFile(t, dir, "notes.txt", "at "+filepath.Dir(filepath.Dir(dir))+"/cua.db\n")
			},
			chainOK: true,
			want:    []string{"notes.txt:1: holds an absolute host path (the data directory)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := finishedBundle(t)
			tt.mutate(t, dir)
			rep := evidence.Verify(dir, []string{verifyCanary})
			if rep.ShareReady != (len(tt.want) == 0) || rep.ChainOK != tt.chainOK {
				t.Errorf("share_ready = %v, chain_ok = %v, want %v, %v; reasons %q", rep.ShareReady, rep.ChainOK, len(tt.want) == 0, tt.chainOK, rep.Reasons)
			}
			if len(tt.want) == 0 && len(rep.Reasons) > 0 {
				t.Errorf("reasons = %q, want none", rep.Reasons)
			}
			all := strings.Join(rep.Reasons, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("reasons %q do not name %q", rep.Reasons, w)
				}
			}
			out, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			if redact.Reveals(string(out), verifyCanary) {
				t.Errorf("the report quotes the canary: %s", out)
			}
		})
	}
}

// TestVerifyReportFiles checks the per-file statuses a report lists.
func TestVerifyReportFiles(t *testing.T) {
	t.Parallel()
	dir := finishedBundle(t)
	writeFile(t, dir, "stray.txt", "x\n")
	writeFile(t, dir, "record.json", "{}")
	if err := os.Remove(filepath.Join(dir, "steps.jsonl")); err != nil {
		t.Fatal(err)
	}
	rep := evidence.Verify(dir, nil)
	got := map[string]string{}
	for _, f := range rep.Files {
		got[f.Path] = f.Status
	}
	want := map[string]string{"events.jsonl": evidence.FileOK, "record.json": evidence.FileChanged,
		"steps.jsonl": evidence.FileMissing, "stray.txt": evidence.FileExtra}
	if len(got) != len(want) || rep.ManifestOK || rep.RunID != "run-verify" || rep.Events != 5 {
		t.Errorf("report = %+v, want files %v", rep, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: status %q, want %q", k, got[k], v)
		}
	}
}
