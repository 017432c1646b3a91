package capability_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// signOnLibrary is a Resolver over the example sign-on (1.0.0) and a
// sealed 1.0.1 of it: a pin resolves to the capability with that hash, an
// id@version to that version and the bare id to 1.0.0.
func signOnLibrary(t *testing.T) (capability.Resolver, *capability.Loaded, *capability.Loaded) {
	t.Helper()
	dir := t.TempDir()
	v100 := filepath.Join(dir, "signon.yaml")
	copyFile(t, "../../examples/capabilities/corebank.auth.sign_on.yaml", v100)
	old, err := capability.Load(v100)
	if err != nil {
		t.Fatal(err)
	}
	next := sealedVariant(t, dir, "signon-1.0.1.yaml", "../../examples/capabilities/corebank.auth.sign_on.yaml",
		"version: 1.0.0", "version: 1.0.1")
	all := []*capability.Loaded{old, next}
	resolve := func(ref, pin string) (*capability.Loaded, error) {
		for _, l := range all {
			switch {
			case pin != "" && l.Hash == pin:
				return l, nil
			case pin == "" && ref == l.Capability.Ref():
				return l, nil
			}
		}
		if pin == "" && ref == "corebank.auth.sign_on" {
			return old, nil
		}
		return nil, errors.New("not in the library")
	}
	return resolve, old, next
}

// sealedVariant writes a sealed copy of the capability file from with one
// edit (old to new) and the declared hash dropped, and loads it.
func sealedVariant(t *testing.T, dir, name, from, old, new string) *capability.Loaded {
	t.Helper()
	src, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), old, new, 1)
	text = text[:strings.Index(text, "content_hash: sha256:")]
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSealPinned: seal rewrites every bare reference to the id@version it
// resolves and pins its content hash, in block and flow style, quoted or
// not, keeping the rest of the text; a pin already written selects the
// version; what cannot be resolved, and any change to a file sealed
// before, is refused and leaves the file as it was.
func TestSealPinned(t *testing.T) {
	t.Parallel()
	resolve, v100, v101 := signOnLibrary(t)
	draft, err := os.ReadFile("testdata/pin/caller.draft.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/pin/caller.pinned.golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const prereq = "  - capability: corebank.auth.sign_on\n    when:"
	tests := []struct {
		name    string
		text    string
		resolve capability.Resolver
		want    string   // the whole sealed file, when set
		lines   []string // lines the sealed file must hold
		wantErr []string // the refusal must say each
	}{
		{name: "bare ids become id@version with content_hash", text: string(draft), resolve: resolve, want: string(golden)},
		{name: "an id@version gets its content_hash",
			text:    strings.Replace(string(draft), prereq, "  - capability: corebank.auth.sign_on@1.0.0\n    when:", 1),
			resolve: resolve,
			lines:   []string{"  - capability: corebank.auth.sign_on@1.0.0\n    content_hash: " + v100.Hash + "\n"}},
		{name: "a pinned bare id gets the pinned version",
			text:    strings.Replace(string(draft), prereq, "  - capability: corebank.auth.sign_on\n    content_hash: "+v101.Hash+"\n    when:", 1),
			resolve: resolve,
			lines:   []string{"  - capability: corebank.auth.sign_on@1.0.1\n    content_hash: " + v101.Hash + "\n    when:"}},
		{name: "a reference nothing resolves", text: string(draft),
			resolve: func(string, string) (*capability.Loaded, error) { return nil, errors.New("not in the library") },
			wantErr: []string{`prerequisites[0].capability: corebank.auth.sign_on: not in the library`}},
		{name: "no library", text: string(draft),
			wantErr: []string{`prerequisites[0].capability: "corebank.auth.sign_on" cannot be pinned without a capability library`}},
		{name: "a resolver that answers another version",
			text:    strings.Replace(string(draft), prereq, "  - capability: corebank.auth.sign_on@1.0.0\n    when:", 1),
			resolve: func(string, string) (*capability.Loaded, error) { return v101, nil },
			wantErr: []string{"prerequisites[0].capability: corebank.auth.sign_on@1.0.0 resolved to corebank.auth.sign_on@1.0.1"}},
		{name: "a file sealed without pins", text: sealedText(t, string(draft)), resolve: resolve,
			wantErr: []string{`prerequisites[0].capability: "corebank.auth.sign_on" is not pinned`, "bump the version"}},
		{name: "a sealed file whose content changed",
			text:    strings.Replace(string(golden), "title: Call the sign-on", "title: Call the sign-on again", 1),
			resolve: resolve,
			wantErr: []string{"content hash mismatch for test.caller@1.0.0", "bump the version"}},
		{name: "a sealed, pinned file seals to itself", text: string(golden), resolve: resolve, want: string(golden)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "caller.yaml")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			hash, err := capability.SealPinned(path, tt.resolve)
			after, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("SealPinned sealed %s, want a refusal", hash)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if string(after) != tt.text {
					t.Error("a refused seal changed the file")
				}
				return
			}
			if err != nil {
				t.Fatalf("SealPinned: %v", err)
			}
			checkSealedPinned(t, path, hash)
			if tt.want != "" && string(after) != tt.want {
				t.Errorf("sealed text:\n%s\nwant:\n%s", after, tt.want)
			}
			for _, w := range tt.lines {
				if !strings.Contains(string(after), w) {
					t.Errorf("sealed text does not hold %q:\n%s", w, after)
				}
			}
		})
	}
}

// checkSealedPinned loads the sealed file at path: it must verify, have
// hash and pin every call.
func checkSealedPinned(t *testing.T, path, hash string) {
	t.Helper()
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Sealed || l.Hash != hash {
		t.Errorf("sealed %s, loaded %s (sealed=%v)", hash, l.Hash, l.Sealed)
	}
	if err := capability.CheckPinned(l.Capability); err != nil {
		t.Errorf("sealed file is not pinned: %v", err)
	}
}

// sealedText is text sealed as it is (with its bare references), the way
// files were sealed before pins were required.
func sealedText(t *testing.T, text string) string {
	t.Helper()
	l, err := capability.Parse("draft.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return text + "content_hash: " + l.Hash + "\n"
}

// TestCheckPinned: a bare id, or an id@version without content_hash, in a
// prerequisite or a run_capability remedy is refused, naming each field.
func TestCheckPinned(t *testing.T) {
	t.Parallel()
	const hash = "sha256:ed56772e1a1b8ca1f8fabc1eed1505721fc093f1185eed4f1f7630f44b621785"
	draft, err := os.ReadFile("testdata/pin/caller.draft.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := os.ReadFile("testdata/pin/caller.pinned.golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want []string // each unpinned field and its reference, "" for none
	}{
		{"pinned", string(pinned), nil},
		{"bare ids", string(draft), []string{
			`prerequisites[0].capability: "corebank.auth.sign_on" is not pinned: want id@version with content_hash`,
			`recovery[0].capability: "corebank.auth.sign_on" is not pinned`,
			`recovery[1].capability: "corebank.auth.sign_on" is not pinned`}},
		{"id@version without content_hash",
			strings.Replace(string(pinned), "    content_hash: "+hash+"\n    when:", "    when:", 1),
			[]string{`prerequisites[0].capability: "corebank.auth.sign_on@1.0.0" is not pinned`}},
		{"bare id with content_hash",
			strings.Replace(string(pinned), "capability: corebank.auth.sign_on@1.0.0 # signs", "capability: corebank.auth.sign_on # signs", 1),
			[]string{`recovery[0].capability: "corebank.auth.sign_on" is not pinned`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := capability.Parse("caller.yaml", []byte(unsealed(tt.text)))
			if err != nil {
				t.Fatal(err)
			}
			err = capability.CheckPinned(l.Capability)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("CheckPinned: %v", err)
				}
				return
			}
			var ue *capability.UnpinnedError
			if !errors.As(err, &ue) || len(ue.Calls) != len(tt.want) {
				t.Fatalf("CheckPinned = %v, want %d unpinned calls", err, len(tt.want))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s: ", l.Capability.Ref())) {
				t.Errorf("error %q does not name the capability", err)
			}
		})
	}
}

// unsealed is text without its top-level content_hash line.
func unsealed(text string) string {
	var kept []string
	for _, line := range strings.SplitAfter(text, "\n") {
		if !strings.HasPrefix(line, "content_hash:") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
