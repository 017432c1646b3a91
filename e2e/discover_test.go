package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

const discoverGoal = "Look up the savings balance, status and as-of date of member 12345"

// TestDiscoverFromCassetteIsReproducible runs the real binary's discover
// twice on the checked-in cassette: both runs write byte-identical sealed
// capabilities with the same hash, and each eval replay succeeds.
func TestDiscoverFromCassetteIsReproducible(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	creds := []string{"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password,
		"CUA_LLM_API_KEY=", "OPENAI_API_KEY="}
	var files [2][]byte
	var hashes [2]string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "caps")
		r := runBin(t, creds, "discover", "--goal", discoverGoal, "--target", b.app.URL(), "--out", out,
			"--cassette", "../examples/cassettes/savings_balance.json", "--data-dir", b.dataDir,
			"--id", "memberdesk.savings_balance_discovered", "--version", "1.0.0", "--json")
		if r.code != 0 {
			t.Fatalf("discover run %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
		var res struct {
			Discovery struct {
				Status string `json:"status"`
				Steps  int    `json:"steps"`
				Tokens int    `json:"tokens"`
			} `json:"discovery"`
			File        string            `json:"file"`
			ContentHash string            `json:"content_hash"`
			Eval        *domain.RunRecord `json:"eval"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("--json: %v\n%s", err, r.stdout)
		}
		if res.Discovery.Status != "finished" || res.Eval == nil || res.Eval.Status != domain.StatusSuccess {
			t.Fatalf("run %d: discovery %s, eval %+v", i, res.Discovery.Status, res.Eval)
		}
		if got := res.Eval.Outputs["savings_balance"]; got != "1234.56" {
			t.Errorf("eval output savings_balance = %v", got)
		}
		data, err := os.ReadFile(res.File)
		if err != nil {
			t.Fatal(err)
		}
		files[i], hashes[i] = data, res.ContentHash
		t.Logf("run %d: %d steps, %d tokens", i, res.Discovery.Steps, res.Discovery.Tokens)
	}
	if string(files[0]) != string(files[1]) || hashes[0] != hashes[1] {
		t.Errorf("two runs of one cassette differ:\nhash %s vs %s", hashes[0], hashes[1])
	}
	if !strings.Contains(string(files[0]), "content_hash: "+hashes[0]) {
		t.Error("the written capability is not sealed with the reported hash")
	}
	// Discovery ends on the details page, whose nav frame still shows the
	// Member Search link: the recorder judged a reentry there from the
	// final screen and, with no identity check on the result, declined it
	// and says why.
	if !strings.Contains(string(files[0]), `no reentry proposed at step click_member_search, although the screen the discovery run ended on shows its target link "Member Search"`) ||
		!strings.Contains(string(files[0]), "reentry needs an identity check") || strings.Contains(string(files[0]), "\nreentry:") {
		t.Errorf("the discovered capability does not carry the reentry judgement of its final screen:\n%s", files[0])
	}
}

// TestDiscoverWithoutKeySaysWhichVariable: with no cassette and no key the
// command names the variable to set, before starting anything.
func TestDiscoverWithoutKeySaysWhichVariable(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "caps")
	env := []string{"CUA_LLM_API_KEY=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY="}
	for _, tt := range []struct{ model, want string }{
		{"openai", "set OPENAI_API_KEY (or CUA_LLM_API_KEY, which every provider reads)"},
		{"anthropic", "set ANTHROPIC_API_KEY (or CUA_LLM_API_KEY, which every provider reads)"},
	} {
		r := runBin(t, env, "discover", "--goal", discoverGoal, "--target", "http://127.0.0.1:9", "--out", out, "--model", tt.model)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("--model %s: exit %d, stderr %q; want %q", tt.model, r.code, r.stderr, tt.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused discover created %s", out)
	}
}
