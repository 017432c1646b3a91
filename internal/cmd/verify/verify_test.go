package verifycmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

const base = "http://127.0.0.1:7000"

// transferYAML is a transfer of an amount: enter it, submit, read the
// confirmation, with enough steps that removing events is a real forgery.
const transferYAML = `schema_version: 1
id: test.transfer
version: 1.0.0
title: Transfer funds
surface: web
entrypoint:
  url_pattern: "{base_url}/"
inputs:
  - name: amount
    type: money
    maximum: 10000
  - name: note
    type: string
    sensitive: true
outputs:
  - name: confirmation
    type: string
    pattern: "TRF-[0-9]{4}"
    source: {step: read_confirmation}
steps:
  - id: enter_amount
    action: type
    target: {role: textbox, name: Amount}
    value: {$input: amount}
  - id: enter_pin
    action: type
    target: {role: textbox, name: PIN}
    value: {$input: note}
  - id: submit
    action: click
    target: {role: button, name: Next}
    postcondition:
      node_exists: {role: heading, name: Transfer posted}
  - id: read_confirmation
    action: extract
    target: {role: cell, anchor: {relation: row_of, text: Confirmation}}
    into: confirmation
escalation:
  triggers: [UNEXPECTED_STATE, TARGET_NOT_FOUND]
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 10
  max_duration_ms: 20000
`

func transferApp() *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "form", Title: "Transfer", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer"},
			{Role: "textbox", Name: "Amount"},
			{Role: "textbox", Name: "PIN"},
			{Role: "button", Name: "Next"},
		}},
		sim.Screen{Name: "done", Title: "Transfer posted", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer posted"},
			{Role: "cell", Name: "TRF-0001", Row: "Confirmation"},
		}},
	)
	f.On("button", "Next", sim.Goto("done"))
	return f
}

// honestRun replays the transfer on the sim surface through the pipeline
// and the catalog's gate (which indexes the run in the data directory's
// SQLite store), with a signing key when signed. It returns the data
// directory and the run's bundle.
func honestRun(t *testing.T, signed bool) (dataDir, dir string) {
	t.Helper()
	ctx := context.Background()
	dataDir = t.TempDir()
	if signed {
		if _, _, err := signkey.Init(dataDir, false); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "transfer.yaml")
	if err := os.WriteFile(path, []byte(transferYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cat, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: dataDir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw, _ := os.ReadFile(path)
	if _, err := cat.Add(ctx, path, raw); err != nil {
		t.Fatal(err)
	}
	s := sim.New(transferApp())
	t.Cleanup(func() { _ = s.Close() })
	rec, err := pipeline.Replay(ctx, pipeline.ReplayParams{
		Run: replay.Options{Capability: l, Inputs: map[string]string{"amount": "250.00", "note": "zq-note-4711"}, BaseURL: base,
			Redactor: redact.New(), DataDir: dataDir, RunID: "run-1", StepWait: 2 * time.Second},
		LibraryDir: filepath.Dir(path),
		Gate:       cat.Gate(catalog.RunParams{}),
		Open:       func(context.Context) (surface.Surface, error) { return s, nil },
	})
	if err != nil || rec.Status != domain.StatusSuccess {
		t.Fatalf("honest run: %+v, %v", rec, err)
	}
	return dataDir, filepath.Join(dataDir, "runs", "run-1")
}

type result struct {
	code int
	rep  evidence.Report
	text string
}

// verify runs `cua verify` on the run under dataDir with args.
func verify(t *testing.T, dataDir string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }}
	cmd := NewCmdVerify(f, nil)
	cmd.SetArgs(append([]string{"run-1", "--data-dir", dataDir, "--json"}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	r := result{}
	var ee *cmdutil.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.Code
	case err != nil:
		t.Fatalf("verify: %v (%s)", err, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), &r.rep); err != nil {
		t.Fatalf("verify output: %v\n%s", err, out.String())
	}
	r.text = strings.Join(r.rep.Reasons, "\n")
	return r
}

func publicKey(t *testing.T, dataDir string) string {
	t.Helper()
	k, _, err := signkey.Load(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return signkey.FormatPublic(k.Public().(ed25519.PublicKey))
}

// TestHonestSignedRunVerifies: a signed run indexed in the store verifies
// share-ready with the exported key and the store's chain head, and its
// run_started event carries the amount by value and the PIN only as a
// keyed digest.
func TestHonestSignedRunVerifies(t *testing.T) {
	dataDir, dir := honestRun(t, true)
	r := verify(t, dataDir, "--key", publicKey(t, dataDir))
	if r.code != 0 || !r.rep.ShareReady || r.rep.Signature != evidence.SigOK || r.rep.Head != evidence.HeadOK || !r.rep.ChainOK || !r.rep.ManifestOK {
		t.Fatalf("honest run: code %d, report %+v", r.code, r.rep)
	}
	keyFile := filepath.Join(t.TempDir(), "deployment.pub")
	if err := os.WriteFile(keyFile, []byte(publicKey(t, dataDir)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := verify(t, dataDir, "--key", keyFile); !r.rep.ShareReady {
		t.Errorf("--key FILE: %+v", r.rep)
	}
	events, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if !bytes.Contains(events, []byte(`"amount":"250.00"`)) && !bytes.Contains(events, []byte(`"amount":250`)) {
		t.Errorf("run_started does not carry the amount:\n%s", events)
	}
	if bytes.Contains(events, []byte("zq-note")) || !bytes.Contains(events, []byte(`"note":{"hmac_sha256":"`)) {
		t.Errorf("run_started does not carry the PIN as a keyed digest only:\n%s", events)
	}
	other := t.TempDir()
	if _, _, err := signkey.Init(other, false); err != nil {
		t.Fatal(err)
	}
	if r := verify(t, dataDir, "--key", publicKey(t, other)); r.code != 1 || r.rep.ShareReady || !strings.Contains(r.text, "signature: does not verify with key") {
		t.Errorf("another key: code %d, %+v", r.code, r.rep)
	}
}

// TestUnsignedRunIsNotShareReady: with no key configured a run's bundle is
// unsigned, and verify says so.
func TestUnsignedRunIsNotShareReady(t *testing.T) {
	dataDir, dir := honestRun(t, false)
	if _, err := os.Stat(filepath.Join(dir, evidence.SignatureFile)); err == nil {
		t.Fatal("an unsigned run wrote manifest.sig")
	}
	r := verify(t, dataDir)
	if r.code != 1 || r.rep.ShareReady || r.rep.Signature != evidence.SigUnsigned || !strings.Contains(r.text, "signature: unsigned") {
		t.Fatalf("unsigned run: code %d, %+v", r.code, r.rep)
	}
}

// TestForgedBundleFails: with write access to the data directory, a forger
// removes 8 events, renumbers, recomputes the chain and the manifest: the
// chain and the manifest check out, but the signature does not and the
// store's chain head names the rewrite. Dropping manifest.sig makes it
// unsigned instead.
func TestForgedBundleFails(t *testing.T) {
	dataDir, dir := honestRun(t, true)
	key := publicKey(t, dataDir)
	removeEvents(t, dir, 8)
	recomputeManifest(t, dir)
	r := verify(t, dataDir, "--key", key)
	if !r.rep.ChainOK || !r.rep.ManifestOK {
		t.Fatalf("the forgery is not a good one (chain %v, manifest %v): %v", r.rep.ChainOK, r.rep.ManifestOK, r.rep.Reasons)
	}
	if r.code != 1 || r.rep.ShareReady || r.rep.Signature != evidence.SigBad || !strings.Contains(r.text, "signature: does not match manifest.json") {
		t.Errorf("forged events: code %d signature %q, reasons:\n%s", r.code, r.rep.Signature, r.text)
	}
	if r.rep.Head != evidence.HeadMismatch || !strings.Contains(r.text, "head: events.jsonl ends at") {
		t.Errorf("forged events: head %q, reasons:\n%s", r.rep.Head, r.text)
	}
	if err := os.Remove(filepath.Join(dir, evidence.SignatureFile)); err != nil {
		t.Fatal(err)
	}
	r = verify(t, dataDir, "--key", key)
	if r.rep.ShareReady || !strings.Contains(r.text, "signature: unsigned") || !strings.Contains(r.text, "head: ") {
		t.Errorf("forged and unsigned: %+v", r.rep)
	}
}

// TestEditedAmountFails: record.json's amount edited (250.00 to 25.00) and
// the manifest recomputed: the signature fails, and the record no longer
// matches the inputs the event log holds.
func TestEditedAmountFails(t *testing.T) {
	dataDir, dir := honestRun(t, true)
	p := filepath.Join(dir, "record.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(raw, []byte(`"250.00"`), []byte(`"25.00"`), 1)
	if bytes.Equal(edited, raw) {
		edited = bytes.Replace(raw, []byte(`"amount": 250`), []byte(`"amount": 25`), 1)
	}
	if bytes.Equal(edited, raw) {
		t.Fatalf("record.json has no amount 250.00:\n%s", raw)
	}
	if err := os.WriteFile(p, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	recomputeManifest(t, dir)
	r := verify(t, dataDir, "--key", publicKey(t, dataDir))
	if !r.rep.ManifestOK || r.rep.ShareReady || r.code != 1 || r.rep.Signature != evidence.SigBad ||
		!strings.Contains(r.text, "signature: does not match manifest.json") ||
		!strings.Contains(r.text, "record.json: input amount is not the value the run_started event holds") {
		t.Errorf("edited amount: code %d manifest %v signature %q, reasons:\n%s", r.code, r.rep.ManifestOK, r.rep.Signature, r.text)
	}
}

// removeEvents drops n events after run_started (never the first or the
// last), renumbers the rest and recomputes their hash chain as Append does.
func removeEvents(t *testing.T, dir string, n int) {
	t.Helper()
	p := filepath.Join(dir, "events.jsonl")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []evidence.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 16<<20)
	var all []evidence.Event
	for sc.Scan() {
		var e evidence.Event
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	if len(all) < n+3 {
		t.Fatalf("the run has %d events, too few to remove %d", len(all), n)
	}
	removed := 0
	for i, e := range all {
		if i > 0 && i < len(all)-1 && e.Type != "run_started" && removed < n {
			removed++
			continue
		}
		kept = append(kept, e)
	}
	var out bytes.Buffer
	prev := evidence.Genesis
	for i, e := range kept {
		e.Seq, e.Prev, e.Hash = i+1, prev, ""
		body, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(append([]byte(prev), body...))
		e.Hash = "sha256:" + hex.EncodeToString(sum[:])
		line, _ := json.Marshal(e)
		out.Write(append(line, '\n'))
		prev = e.Hash
	}
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// recomputeManifest rewrites manifest.json for the files and the chain as
// they now are, keeping every other field.
func recomputeManifest(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, evidence.ManifestFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m evidence.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m.Files = map[string]evidence.FileDigest{}
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel == evidence.ManifestFile || rel == evidence.SignatureFile {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		m.Files[rel] = evidence.FileDigest{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	events, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(events)), "\n")
	var last evidence.Event
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	m.ChainHead, m.Events = last.Hash, len(lines)
	out, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(p, append(out, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}
