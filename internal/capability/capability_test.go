package capability

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite golden files")

const examples = "../../examples/capabilities"

func exampleFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("reference capabilities: %v (%d files)", err, len(files))
	}
	return files
}

func TestReferenceCapabilitiesValidate(t *testing.T) {
	t.Parallel()
	for _, f := range exampleFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			l, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if !l.Sealed {
				t.Errorf("%s is not sealed", f)
			}
		})
	}
}

// TestInvalidCapabilities checks that every malformed file under
// testdata/invalid is refused with the expected field path and a line.
func TestInvalidCapabilities(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) < 12 {
		t.Fatalf("want at least 12 malformed capabilities, have %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			wantPath, wantMsg := readWant(t, f)
			_, err := Load(f)
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("want *InvalidError, got %v", err)
			}
			for _, p := range inv.Problems {
				if p.Path == wantPath && strings.Contains(p.Message, wantMsg) {
					if p.File != f || p.Line <= 0 {
						t.Errorf("problem lacks file or line: %+v", p)
					}
					return
				}
			}
			t.Errorf("no problem at %q containing %q; got:\n%v", wantPath, wantMsg, err)
		})
	}
}

func readWant(t *testing.T, f string) (string, string) {
	t.Helper()
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	line, _ := bufio.NewReader(fh).ReadString('\n')
	spec, ok := strings.CutPrefix(strings.TrimSpace(line), "# want: ")
	if !ok {
		t.Fatalf("%s: first line must be '# want: PATH | MESSAGE'", f)
	}
	path, msg, _ := strings.Cut(spec, " | ")
	return path, msg
}

func TestBaseIsValid(t *testing.T) {
	t.Parallel()
	l, err := Load("testdata/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Sealed {
		t.Fatal("base is a draft")
	}
}

// TestHashIndependentOfLayout reorders every mapping, flips block and flow
// styles, and renders the capability as JSON: the hash must not change.
func TestHashIndependentOfLayout(t *testing.T) {
	t.Parallel()
	golden := map[string]string{}
	for _, f := range exampleFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		golden[want.Capability.Ref()] = want.Hash

		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatal(err)
		}
		reshape(&root)
		reordered, err := yaml.Marshal(&root)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		if err := yaml.Unmarshal(data, &generic); err != nil {
			t.Fatal(err)
		}
		asJSON, err := json.MarshalIndent(generic, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		for name, variant := range map[string][]byte{"reordered.yaml": reordered, "rendered.json": asJSON} {
			got, err := Parse(name, variant)
			if err != nil {
				t.Fatalf("%s %s: %v", f, name, err)
			}
			if got.Hash != want.Hash {
				t.Errorf("%s %s: hash %s, want %s", f, name, got.Hash, want.Hash)
			}
		}
	}
	checkGolden(t, "testdata/hashes.golden.json", golden)
}

// reshape reverses the key order of every mapping and flips block/flow style.
func reshape(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode {
		pairs := len(n.Content) / 2
		for i := 0; i < pairs/2; i++ {
			j := pairs - 1 - i
			n.Content[2*i], n.Content[2*j] = n.Content[2*j], n.Content[2*i]
			n.Content[2*i+1], n.Content[2*j+1] = n.Content[2*j+1], n.Content[2*i+1]
		}
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style ^= yaml.FlowStyle
	}
	for _, c := range n.Content {
		reshape(c)
	}
}

func checkGolden(t *testing.T, path string, got map[string]string) {
	t.Helper()
	b, _ := json.MarshalIndent(got, "", "  ")
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if string(want) != string(b) {
		t.Errorf("hashes differ from %s (run with -update if intended):\n got %s\nwant %s", path, b, want)
	}
}

func TestTamperedFileRefused(t *testing.T) {
	t.Parallel()
	src := filepath.Join(examples, "memberdesk.savings_balance.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(data), "name: Search\n", "name: Searcg\n", 1)
	if tampered == string(data) {
		t.Fatal("fixture lost its Search step")
	}
	_, err = Parse("tampered.yaml", []byte(tampered))
	var mm *HashMismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("want hash mismatch, got %v", err)
	}
	if !strings.Contains(err.Error(), "content hash mismatch for memberdesk.savings_balance@1.2.0: declared sha256:") {
		t.Errorf("message: %v", err)
	}
	if mm.Declared == mm.Computed {
		t.Error("declared equals computed")
	}
}

func TestSeal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "draft.yaml")
	draft := "# a comment that must survive\n" + mustRead(t, "testdata/base.yaml")
	if err := os.WriteFile(path, []byte(draft), 0o640); err != nil {
		t.Fatal(err)
	}
	h1, err := Seal(path)
	if err != nil {
		t.Fatal(err)
	}
	sealed := mustRead(t, path)
	if !strings.HasPrefix(sealed, draft[:len(draft)-1]) || !strings.Contains(sealed, "content_hash: "+h1) {
		t.Fatalf("seal rewrote the text:\n%s", sealed)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	l, err := Load(path)
	if err != nil || !l.Sealed || l.Hash != h1 {
		t.Fatalf("sealed file does not load: %v", err)
	}
	// Sealing again is a no-op.
	h2, err := Seal(path)
	if err != nil || h2 != h1 || mustRead(t, path) != sealed {
		t.Fatalf("second seal changed something: %v", err)
	}
	// A changed sealed file is refused and left untouched.
	changed := strings.Replace(sealed, "Test lookup", "Test lookup!", 1)
	if err := os.WriteFile(path, []byte(changed), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Seal(path); !errors.As(err, new(*HashMismatchError)) {
		t.Fatalf("want mismatch, got %v", err)
	}
	if mustRead(t, path) != changed {
		t.Error("refused seal modified the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestSealJSON(t *testing.T) {
	t.Parallel()
	var generic any
	if err := yaml.Unmarshal([]byte(mustRead(t, "testdata/base.yaml")), &generic); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(generic, "", "  ")
	path := filepath.Join(t.TempDir(), "draft.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Seal(path)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, path)), &back); err != nil {
		t.Fatalf("sealed JSON is not JSON: %v", err)
	}
	if back["content_hash"] != h {
		t.Errorf("content_hash %v, want %s", back["content_hash"], h)
	}
}

func TestBindInputs(t *testing.T) {
	t.Parallel()
	l, err := Load(filepath.Join(examples, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25"}
	tests := []struct {
		name   string
		change map[string]string
		drop   string
		bad    string
	}{
		{name: "valid"},
		{name: "shortest valid member", change: map[string]string{"member_id": "00000"}},
		{name: "too short", change: map[string]string{"member_id": "1234"}, bad: "member_id"},
		{name: "too long", change: map[string]string{"member_id": "123456"}, bad: "member_id"},
		{name: "empty", change: map[string]string{"member_id": ""}, bad: "member_id"},
		{name: "padded", change: map[string]string{"member_id": " 12345"}, bad: "member_id"},
		{name: "non-ascii digits", change: map[string]string{"member_id": "١٢٣٤٥"}, bad: "member_id"},
		{name: "sql", change: map[string]string{"member_id": "1' OR '1'='1"}, bad: "member_id"},
		{name: "html", change: map[string]string{"member_id": "<b>1</b>"}, bad: "member_id"},
		{name: "enum wrong", change: map[string]string{"to_account": "Brokerage"}, bad: "to_account"},
		{name: "money format", change: map[string]string{"amount": "1,000"}, bad: "amount"},
		{name: "money over maximum", change: map[string]string{"amount": "10000.01"}, bad: "amount"},
		{name: "money zero", change: map[string]string{"amount": "0"}, bad: "amount"},
		{name: "missing", drop: "amount", bad: "amount"},
		{name: "unknown", change: map[string]string{"colour": "blue"}, bad: "colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := map[string]string{}
			for k, v := range good {
				in[k] = v
			}
			for k, v := range tt.change {
				in[k] = v
			}
			delete(in, tt.drop)
			got, err := BindInputs(l.Capability, in)
			if tt.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got["amount"] != "25.00" {
					t.Errorf("amount = %v, want canonical 25.00", got["amount"])
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InputError, got %v", err)
			}
			if !slices.ContainsFunc(ie.Problems, func(p Problem) bool { return p.Path == tt.bad }) {
				t.Errorf("problems %v do not name %s", ie.Problems, tt.bad)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestValidKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"Enter": true, "Tab": true, "Space": true, "a": true, "7": true, "/": true,
		"\r": false, "\n": false, " ": false, "\t": false, "ab": false, "": false, "\x00": false,
	} {
		if got := ValidKey(key); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", key, got, want)
		}
	}
}
