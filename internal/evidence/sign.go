package evidence

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/redact"
)

// SignatureFile is the name of a signed bundle's signature of its
// manifest.
const SignatureFile = "manifest.sig"

// SignatureSchemaVersion is the version of manifest.sig's shape.
const SignatureSchemaVersion = 1

// signedPrefix separates what a manifest signature covers from anything
// else the key might sign: the signed message is signedPrefix followed by
// manifest.json's exact bytes.
const signedPrefix = "cua evidence manifest v1\x00"

// Signature is manifest.sig: the deployment key's ed25519 signature of
// manifest.json (which holds every file's sha256, the chain head, the run
// id, the capability's content hash and the inputs digest).
type Signature struct {
	SchemaVersion int    `json:"schema_version"`
	Algorithm     string `json:"algorithm"`
	// Key is the signer's public key (signkey's text form) and KeyID its
	// fingerprint; a verifier checks against a key it trusts, never this.
	Key   string `json:"key"`
	KeyID string `json:"key_id"`
	// ManifestSHA256 is the hex sha256 of the manifest.json signed.
	ManifestSHA256 string `json:"manifest_sha256"`
	// Signature is the base64 ed25519 signature of signedPrefix followed by
	// manifest.json's bytes. The store keeps it beside the chain head.
	Signature string `json:"signature"`
}

// Anchor is what the store keeps of a bundle (DESIGN invariant 18): the
// chain head of its events and its manifest's signature (empty when the
// bundle is unsigned).
type Anchor struct {
	ChainHead string
	Signature string
}

// ReadAnchor reads the anchor of the finished bundle in dir from its
// manifest and signature, for the run's index row.
func ReadAnchor(dir string) (Anchor, error) {
	m, err := readManifest(dir)
	if err != nil {
		return Anchor{}, err
	}
	a := Anchor{ChainHead: m.ChainHead}
	sig, err := readSignature(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return a, err
	default:
		a.Signature = sig.Signature
	}
	return a, nil
}

func publicText(k ed25519.PrivateKey) string {
	if k == nil {
		return ""
	}
	return signkey.FormatPublic(k.Public().(ed25519.PublicKey))
}

// inputKey keys the digests of sensitive inputs: derived from the signing
// key, so the deployment can recompute them; with no key, random and
// forgotten, so a digest reveals nothing and proves nothing.
func inputKey(k ed25519.PrivateKey) []byte {
	if k == nil {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return b
	}
	sum := sha256.Sum256(append([]byte("cua evidence input digest v1\x00"), k.Seed()...))
	return sum[:]
}

// sealInputs replaces each sensitive input of rs by its keyed digest.
func (b *Bundle) sealInputs(rs RunStarted) RunStarted {
	if rs.Inputs == nil {
		return rs
	}
	in := make(map[string]any, len(rs.Inputs))
	for name, v := range rs.Inputs {
		if slices.Contains(rs.Sensitive, name) {
			mac := hmac.New(sha256.New, b.inputKey)
			mac.Write([]byte(name + "\x00" + fmt.Sprint(v)))
			v = map[string]any{"hmac_sha256": hex.EncodeToString(mac.Sum(nil))}
		}
		in[name] = v
	}
	rs.Inputs, rs.Sensitive = in, nil
	return rs
}

// noteRunStarted keeps, for the manifest, what a run_started event's data
// (as written) says of the run.
func (b *Bundle) noteRunStarted(data map[string]any) {
	b.capability, _ = data["capability"].(string)
	b.contentHash, _ = data["content_hash"].(string)
	if in, ok := data["inputs"]; ok {
		b.inputsDigest = inputsDigest(in)
	}
}

// inputsDigest is "sha256:" + hex of v's compact JSON (sorted keys).
func inputsDigest(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func writeSignature(dir string, manifest []byte, k ed25519.PrivateKey) error {
	pub := k.Public().(ed25519.PublicKey)
	sum := sha256.Sum256(manifest)
	s := Signature{SchemaVersion: SignatureSchemaVersion, Algorithm: "ed25519", Key: signkey.FormatPublic(pub), KeyID: signkey.ID(pub),
		ManifestSHA256: hex.EncodeToString(sum[:]),
		Signature:      base64.StdEncoding.EncodeToString(ed25519.Sign(k, append([]byte(signedPrefix), manifest...)))}
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: encode signature: %w", err)
	}
	return writeAtomic(filepath.Join(dir, SignatureFile), append(raw, '\n'))
}

func readSignature(dir string) (*Signature, error) {
	raw, err := readBounded(filepath.Join(dir, SignatureFile))
	if err != nil {
		return nil, err
	}
	var s Signature
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.SchemaVersion != SignatureSchemaVersion || s.Algorithm != "ed25519" {
		return nil, errors.New("manifest.sig is not a signature this version reads")
	}
	return &s, nil
}

// Signature and head statuses of a Report.
const (
	SigOK         = "ok"
	SigUnsigned   = "unsigned"
	SigBad        = "bad"
	SigNotChecked = "not checked"
	HeadOK        = "ok"
	HeadMismatch  = "mismatch"
	HeadMissing   = "not anchored"
	HeadNotInDB   = "not in the store"
	HeadUnchecked = "not checked"
)

// checkSignature checks manifest.sig against opts.Key and the store's
// anchor.
func (rep *Report) checkSignature(dir string, opts VerifyOptions) {
	sig, err := readSignature(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rep.Signature = SigUnsigned
		if opts.RequireSignature {
			rep.Reasons = append(rep.Reasons, "signature: unsigned (no manifest.sig: no signing key was configured when the run ended; see `cua keys init`)")
		}
		return
	case err != nil:
		rep.Signature = SigBad
		rep.Reasons = append(rep.Reasons, "signature: "+err.Error())
		return
	}
	rep.SigningKey = sig.KeyID
	if opts.Anchor != nil && opts.Anchor.Signature != "" && opts.Anchor.Signature != sig.Signature {
		rep.Signature = SigBad
		rep.Reasons = append(rep.Reasons, "signature: manifest.sig is not the signature the store's run row keeps (the bundle was re-signed or replaced)")
		return
	}
	if opts.Key == nil {
		rep.Signature = SigNotChecked
		if opts.RequireSignature {
			rep.Reasons = append(rep.Reasons, "signature: not checked: no public key to check it with (pass --key, or configure the deployment key)")
		}
		return
	}
	manifest, err := readBounded(filepath.Join(dir, ManifestFile))
	if err != nil {
		rep.Signature = SigBad
		rep.Reasons = append(rep.Reasons, "signature: no manifest.json to check it against")
		return
	}
	raw, err := base64.StdEncoding.DecodeString(sig.Signature)
	if err == nil && ed25519.Verify(opts.Key, append([]byte(signedPrefix), manifest...), raw) {
		rep.Signature = SigOK
		return
	}
	rep.Signature = SigBad
	if want := signkey.ID(opts.Key); sig.KeyID != want {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("signature: does not verify with key %s (manifest.sig names key %s: signed by another key, or forged)", want, sig.KeyID))
		return
	}
	rep.Reasons = append(rep.Reasons, "signature: does not match manifest.json (the manifest was changed after it was signed)")
}

// checkHead compares the chain head the events end at with the store's.
func (rep *Report) checkHead(opts VerifyOptions) {
	switch {
	case opts.NotInStore:
		rep.Head = HeadNotInDB
		rep.Reasons = append(rep.Reasons, "head: the run is not in the store, so its chain head cannot be checked")
	case opts.Anchor == nil:
		rep.Head = HeadUnchecked
	case opts.Anchor.ChainHead == "":
		rep.Head = HeadMissing
		rep.Reasons = append(rep.Reasons, "head: the store's run row keeps no chain head (the run was not anchored when it ended)")
	case opts.Anchor.ChainHead != rep.ChainHead:
		rep.Head = HeadMismatch
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("head: events.jsonl ends at %s (seq %d), the store's run row keeps %s (the event log was rewritten)",
			rep.ChainHead, rep.Events, opts.Anchor.ChainHead))
	default:
		rep.Head = HeadOK
	}
}

// checkInputs checks the run_started event's inputs against the manifest's
// inputs digest and record.json's inputs: a plain input's value in the
// record must be the one the signed event log holds.
func (rep *Report) checkInputs(dir string, m *Manifest) {
	started, ok := runStartedData(dir)
	if !ok {
		return
	}
	in, has := started["inputs"]
	if m != nil && m.SchemaVersion >= 2 && has && m.InputsDigest != inputsDigest(in) {
		rep.Reasons = append(rep.Reasons, "manifest.json: inputs_digest is not the digest of the run_started event's inputs")
	}
	events, _ := in.(map[string]any)
	if !has {
		return
	}
	raw, err := readBounded(filepath.Join(dir, "record.json"))
	if err != nil {
		return
	}
	var rec struct {
		Inputs map[string]json.RawMessage `json:"inputs"`
	}
	if json.Unmarshal(raw, &rec) != nil {
		rep.Reasons = append(rep.Reasons, "record.json: not a run record")
		return
	}
	names := make([]string, 0, len(rec.Inputs))
	for name := range rec.Inputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ev, ok := events[name]
		if !ok {
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("record.json: input %s is not among the run_started event's inputs (the record was edited)", name))
			continue
		}
		if obj, ok := ev.(map[string]any); ok && obj["hmac_sha256"] != nil {
			continue // sensitive: the record holds its masked shape only
		}
		want, _ := json.Marshal(ev)
		got := compactJSON(rec.Inputs[name])
		if strings.Contains(string(got), redact.Marker) || strings.Contains(string(want), redact.Marker) {
			continue
		}
		if !bytes.Equal(got, want) {
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("record.json: input %s is not the value the run_started event holds (the record was edited)", name))
		}
	}
}

func compactJSON(raw json.RawMessage) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return out
}

// runStartedData is the data of the first run_started event of dir's log.
func runStartedData(dir string) (map[string]any, bool) {
	f, err := fsx.OpenNoFollow(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"run_started"`)) {
			continue
		}
		var e struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if dec.Decode(&e) == nil && e.Type == (RunStarted{}).EventType() {
			return e.Data, true
		}
	}
	return nil, false
}

// DeploymentKey is the public half of the key runs under dataDir sign
// with (signkey.Load: CUA_SIGNING_KEY as taken, else dataDir's key file),
// the key a verifier that serves or judges the deployment's bundles
// trusts; nil with no error when no key is configured. A key that is
// configured but unusable is an error.
func DeploymentKey(dataDir string) (ed25519.PublicKey, error) {
	k, _, err := signkey.Load(dataDir)
	if errors.Is(err, signkey.ErrNoKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evidence: deployment key: %w", err)
	}
	return k.Public().(ed25519.PublicKey), nil
}

// VerifyDeployment verifies the bundle in dir the way a front end that
// serves the deployment's runs must: with the deployment's public key
// (nil: none is configured), a bundle must carry a signature that
// verifies with it (an unsigned or forged bundle is not share_ready);
// with none, VerifyDeployment is Verify.
func VerifyDeployment(dir string, key ed25519.PublicKey, canaries []string) Report {
	return VerifyWith(dir, VerifyOptions{Canaries: canaries, Key: key, RequireSignature: key != nil})
}
