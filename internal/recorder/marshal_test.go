package recorder

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// TestMarshalReferenceCapabilities writes every hand-written reference and
// loads it back: the hash (and so every hashed field) must survive, and a
// sealed reference stays sealed.
func TestMarshalReferenceCapabilities(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("reference capabilities: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			l, err := capability.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			data, err := Marshal(l.Capability, nil)
			if err != nil {
				t.Fatal(err)
			}
			back, err := capability.Parse(f, data)
			if err != nil {
				t.Fatalf("%s\n%v", data, err)
			}
			if back.Hash != l.Hash || !back.Sealed {
				t.Errorf("written hash %s (sealed %v), reference %s", back.Hash, back.Sealed, l.Hash)
			}
			if bytes.Contains(data, []byte("Review notes")) || bytes.Contains(data, []byte("A draft")) {
				t.Errorf("a sealed file without notes has a draft header:\n%s", data)
			}
		})
	}
}

// TestMarshalQuoting writes strings YAML would misread unquoted, in block
// and flow positions, and wants them back verbatim.
func TestMarshalQuoting(t *testing.T) {
	t.Parallel()
	tricky := []string{
		"yes", "No", "on", "null", "~", "true", "123", "00123", "1e3", "0x1F", "1.5", ".inf",
		"a: b", "a #b", "#c", "- x", "[x]", "{y}", "Search, then go", "'quoted'", `"dq"`, `it's "both"`,
		" lead", "trail ", "*alias", "&anchor", "!tag", "%dir", "@at", "`tick`", "|pipe", ">fold",
		"? q", "2026-11-30", "2026-11-30T14:30:00Z", "multi\nline", "tab\there", "bell\a", "é ü 中文",
		"{base_url}/", "<<", "=", "-", "?", ":", ",",
	}
	base := loadExample(t, "memberdesk.savings_balance")
	for _, s := range tricky {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			c := clone(*base)
			c.ContentHash = ""
			c.Description = s
			c.Steps[0].Description = s
			c.Steps[0].Target.Name.Value = s                   // block target
			c.Steps[0].Postcondition.NodeExists.Name.Value = s // flow target
			c.Steps[0].Target.Hints.CSS = s                    // quoted flow value
			c.Outcomes[0].When.TextPresent.Text = s            // text query
			c.Outcomes[0].Returns = map[string]string{"k": s}  // map value
			c.Inputs[0].Example = nil                          // keep the input valid
			c.Outputs[1].Enum = []string{s, "Closed"}          // flow sequence
			c.Provenance.ReviewNotes = []string{s}             // block sequence
			c.Provenance.Author = s
			data, err := Marshal(&c, []string{s})
			if err != nil {
				t.Fatal(err)
			}
			l, err := capability.Parse("tricky.yaml", data)
			if err != nil {
				t.Fatalf("%s\n%v", data, err)
			}
			want, _ := capability.Hash(&c)
			if l.Hash != want {
				t.Fatalf("hash changed: the file reads back differently:\n%s", data)
			}
			got := l.Capability
			if got.Description != s || got.Steps[0].Target.Name.Value != s || got.Outputs[1].Enum[0] != s || got.Outcomes[0].Returns["k"] != s {
				t.Errorf("read back %q, %q, %q", got.Description, got.Steps[0].Target.Name.Value, got.Outputs[1].Enum[0])
			}
		})
	}
}

// TestMarshalDefaultsLeftOut checks that fields equal to their defaults
// are not written (policy numbers and max_attempts are, as in the
// reference files), and that both spellings hash the same.
func TestMarshalDefaultsLeftOut(t *testing.T) {
	t.Parallel()
	raw := &domain.Capability{
		SchemaVersion: 1, ID: "test.defaults", Version: "1.0.0", Title: "Defaults", Surface: domain.SurfaceWeb,
		Entrypoint: domain.Entrypoint{URLPattern: "{base_url}/"},
		Inputs:     []domain.InputSpec{{Name: "q", Type: domain.TypeString, Required: true}},
		Outputs:    []domain.OutputSpec{{Name: "r", Type: domain.TypeString, Required: true, Source: domain.OutputSource{Step: "read"}}},
		Steps: []domain.Step{
			{
				ID: "go", Action: domain.ActClick, Target: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Go"}},
				Postcondition: &domain.Predicate{TextPresent: &domain.TextQuery{Text: "Done"}}, Wait: &domain.Wait{},
			},
			{ID: "read", Action: domain.ActExtract, Target: &domain.TargetDescriptor{Role: "cell"}, Into: "r"},
		},
		Recovery: []domain.RecoveryRule{{ID: "r", When: domain.Predicate{HTTPStatusIn: []int{502}}, Remedy: domain.RemedyReload}},
	}
	withDefaults := clone(*raw)
	capability.ApplyDefaults(&withDefaults)
	want, _ := capability.Hash(raw)
	for _, c := range []*domain.Capability{raw, &withDefaults} {
		data, err := Marshal(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, absent := range []string{"required", "sensitive", "risk: safe\n    ", "gate", "checkpoint", "match", "backoff"} {
			if bytes.Contains(data, []byte(absent)) {
				t.Errorf("%q is written:\n%s", absent, data)
			}
		}
		l, err := capability.Parse("d.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		if l.Hash != want {
			t.Errorf("hash %s, want %s", l.Hash, want)
		}
	}
}

func TestMarshalNil(t *testing.T) {
	t.Parallel()
	if _, err := Marshal(nil, nil); err == nil {
		t.Error("Marshal(nil) succeeded")
	}
}

// TestWrittenFileSeals writes a compiled capability with WriteFileAtomic,
// seals it twice (the second time changes nothing) and refuses a tampered
// copy.
func TestWrittenFileSeals(t *testing.T) {
	t.Parallel()
	res, data := mustCompile(t, loadTrace(t, "savings_balance.trace.json"), savingsOptions(t))
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := capability.WriteFileAtomic(path, data); err != nil {
		t.Fatal(err)
	}
	h1, err := capability.Seal(path)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := os.ReadFile(path)
	if !bytes.HasPrefix(sealed, data[:len(data)-1]) || !strings.HasSuffix(string(sealed), "content_hash: "+h1+"\n") {
		t.Errorf("sealing did not just append the hash:\n%s", sealed)
	}
	if h2, err := capability.Seal(path); err != nil || h2 != h1 {
		t.Errorf("second seal = %s, %v", h2, err)
	}
	tampered := bytes.Replace(sealed, []byte("name: Search\n"), []byte("name: Searcg\n"), 1)
	if _, err := capability.Parse(path, tampered); err == nil {
		t.Error("a tampered sealed file loaded")
	}
	// Marshal of the sealed capability writes the same hash back.
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Marshal(l.Capability, res.Notes)
	if err != nil {
		t.Fatal(err)
	}
	if l2, err := capability.Parse(path, again); err != nil || !l2.Sealed || l2.Hash != h1 {
		t.Errorf("re-marshalled sealed file: %v", err)
	}
}
