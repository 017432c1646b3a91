package demo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/redact"
)

// TestVerifyStageChecksSignatures (invariant 18): with a deployment key,
// the demo's last stage verifies each run's signature with it: honest
// signed runs pass; a forged run (events removed, chain and manifest
// recomputed) fails the stage, named with the signature's reason.
func TestVerifyStageChecksSignatures(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if _, _, err := signkey.Init(data, false); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r-one", "r-two"} {
		writeSignedRun(t, data, id)
	}
	e := &env{cfg: Config{DataDir: data}}
	if r := e.verifyStage(map[string]bool{}); !r.Pass || !strings.Contains(r.Detail, "signature, ") {
		t.Fatalf("honest signed runs: %+v", r)
	}
	forge(t, filepath.Join(data, "runs", "r-two"), 2)
	r := e.verifyStage(map[string]bool{})
	if r.Pass || !strings.Contains(r.Detail, "r-two: ") || !strings.Contains(r.Detail, "signature: does not match manifest.json") ||
		strings.Contains(r.Detail, "r-one: ") {
		t.Fatalf("a forged run: %+v; want the stage failed naming r-two's signature", r)
	}
}

// writeSignedRun writes a small finished run with the evidence writer
// (signed with the data directory's key).
func writeSignedRun(t *testing.T, data, id string) {
	t.Helper()
	b, err := evidence.Open(data, id, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	events := []evidence.Payload{
		evidence.RunStarted{Capability: "memberdesk.savings_balance@1.2.0", ContentHash: "sha256:abc", BaseURL: "http://127.0.0.1:9/",
			Inputs: map[string]any{"member_id": "12345"}},
		evidence.StepFinished{Status: "ok", DurationMS: 3}, evidence.StepFinished{Status: "ok", DurationMS: 4},
		evidence.StepFinished{Status: "ok", DurationMS: 5}, evidence.RunFinished{Status: domain.StatusSuccess},
	}
	for i, p := range events {
		if err := b.Append(evidence.NewEvent(at.Add(time.Duration(i)*time.Second), domain.ActorAutomation, "", p)); err != nil {
			t.Fatal(err)
		}
	}
	rec := &domain.RunRecord{SchemaVersion: 1, RunID: id, Capability: "memberdesk.savings_balance@1.2.0", ContentHash: "sha256:abc",
		Status: domain.StatusSuccess, Inputs: map[string]any{"member_id": "12345"}, Steps: []domain.StepResult{}}
	if err := b.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// forge rewrites the finished bundle in dir as a forger with write access
// to the data directory would: it drops n events after run_started (never
// the first or the last), renumbers and rechains the rest as Append does,
// and recomputes manifest.json over the files as they now are. The chain
// and the manifest then check out; only the signature can tell.
func forge(t *testing.T, dir string, n int) {
	t.Helper()
	p := filepath.Join(dir, "events.jsonl")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var all []evidence.Event
	for line := range strings.Lines(string(raw)) {
		var e evidence.Event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	if len(all) < n+2 {
		t.Fatalf("%s has %d events, too few to remove %d", dir, len(all), n)
	}
	kept := append([]evidence.Event{all[0]}, all[1+n:]...)
	var out bytes.Buffer
	prev := evidence.Genesis
	for i, e := range kept {
		e.Seq, e.Prev, e.Hash = i+1, prev, ""
		body, _ := json.Marshal(e)
		sum := sha256.Sum256(append([]byte(prev), body...))
		e.Hash = "sha256:" + hex.EncodeToString(sum[:])
		line, _ := json.Marshal(e)
		out.Write(append(line, '\n'))
		prev = e.Hash
	}
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, evidence.ManifestFile)
	var m evidence.Manifest
	if raw, err = os.ReadFile(mp); err != nil || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("manifest of %s: %v", dir, err)
	}
	m.Files, m.ChainHead, m.Events = map[string]evidence.FileDigest{}, prev, len(kept)
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel = filepath.ToSlash(rel); rel == evidence.ManifestFile || rel == evidence.SignatureFile {
			return nil
		}
		data, err := os.ReadFile(path)
		sum := sha256.Sum256(data)
		m.Files[rel] = evidence.FileDigest{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(mp, append(enc, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}
