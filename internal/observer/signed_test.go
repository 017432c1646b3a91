package observer_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/observer"
)

// TestForgedBundleIsNotSafe (invariant 18): in a deployment with a signing
// key, a bundle whose events were removed and whose chain and manifest were
// recomputed (only the signature can tell), and one stripped of its
// signature, are not share_ready: `cua observe --safe` does not list or
// serve them, and the library shows them not share_ready; the honest run
// is served.
func TestForgedBundleIsNotSafe(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if _, _, err := signkey.Init(data, false); err != nil {
		t.Fatal(err)
	}
	shot := testPNG(t, 64, 40, color.RGBA{R: 40, G: 90, B: 160, A: 255})
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i, id := range []string{"r-honest", "r-forged", "r-unsigned"} {
		writeBundle(t, data, bundleSpec{id: id, capability: "memberdesk.savings_balance@1.2.0", status: domain.StatusSuccess,
			started: at.Add(time.Duration(i) * time.Minute), shots: [][]byte{shot, shot, shot}})
	}
	forge(t, filepath.Join(data, "runs", "r-forged"), 2)
	if rep := evidence.Verify(filepath.Join(data, "runs", "r-forged"), nil); !rep.ChainOK || !rep.ManifestOK {
		t.Fatalf("the forgery is not a good one: %v", rep.Reasons)
	}
	if err := os.Remove(filepath.Join(data, "runs", "r-unsigned", evidence.SignatureFile)); err != nil {
		t.Fatal(err)
	}
	all, err := observer.NewLibrary(observer.LibraryOptions{RunsDir: filepath.Join(data, "runs"), Canaries: []string{seededSecret}})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := all.Summaries(observer.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, s := range sums {
		ready[s.ID] = s.ShareReady
	}
	if len(ready) != 3 || !ready["r-honest"] || ready["r-forged"] || ready["r-unsigned"] {
		t.Errorf("share_ready by run = %v, want only r-honest", ready)
	}
	b := serve(t, data, observer.Exposure{Safe: true}, "")
	if got := historyIDs(t, b, ""); strings.Join(got, ",") != "r-honest" {
		t.Errorf("--safe lists %v, want only r-honest", got)
	}
	for _, id := range []string{"r-forged", "r-unsigned"} {
		if res := b.get(t, "/runs/"+id); res.status != 404 {
			t.Errorf("--safe serves %s: %d, want 404", id, res.status)
		}
	}
	if res := b.get(t, "/runs/r-honest"); res.status != 200 {
		t.Errorf("--safe does not serve the honest run: %d", res.status)
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
