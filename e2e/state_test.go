package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// TestDiscoverOnTheStateSurface explores MemberDesk through its HTTP
// automation contract (no browser, no screenshot) with a non-vision
// provider (the scripted explorer through exec:), compiles, seals and
// replays the result on a fresh automation session; the application's state
// drives progress and is never written to evidence.
func TestDiscoverOnTheStateSurface(t *testing.T) {
	t.Parallel()
	explorer := filepath.Join(t.TempDir(), "explorer")
	if out, err := exec.Command("go", "build", "-o", explorer, "../examples/explorer").CombinedOutput(); err != nil {
		t.Fatalf("build explorer: %v\n%s", err, out)
	}
	b := setup(t, mockapp.Options{})
	out := filepath.Join(t.TempDir(), "caps")
	creds := []string{"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}
	r := runBin(t, creds, "discover", "--surface", "state", "--goal", discoverGoal, "--target", b.app.URL(),
		"--out", out, "--model", "exec:"+explorer, "--data-dir", b.dataDir, "--id", "memberdesk.savings_balance_state", "--json")
	if r.code != 0 {
		t.Fatalf("discover: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		Discovery struct{ Status string } `json:"discovery"`
		File      string                  `json:"file"`
		Eval      *domain.RunRecord       `json:"eval"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Discovery.Status != "finished" || res.Eval == nil || res.Eval.Status != domain.StatusSuccess {
		t.Fatalf("discovery %s, eval %+v", res.Discovery.Status, res.Eval)
	}
	if got := res.Eval.Outputs["savings_balance"]; got != "1234.56" {
		t.Errorf("eval savings_balance = %v", got)
	}
	capText, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(capText), "surface: state") {
		t.Error("the compiled capability does not say it drives the state surface")
	}
	// A replay of the compiled capability through the binary picks the state
	// surface from the capability and answers for another member too.
	rr := runBin(t, creds, "replay", res.File, "-i", "member_id=56789", "--base-url", b.app.URL(), "--data-dir", b.dataDir, "--json")
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(rr.stdout), &rec); err != nil || rec.Status != domain.StatusSuccess || rec.Outputs["savings_balance"] != "12345678.90" {
		t.Errorf("replay for 56789: exit %d, %+v %v\n%s", rr.code, rec.Outputs, err, rr.stderr)
	}
	// The app state ("signed_on", "screen", …) never reaches evidence.
	filepath.Walk(b.dataDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, _ := os.ReadFile(path)
		for _, leak := range []string{"app_state", "signed_on", `"screen"`} {
			if strings.Contains(string(data), leak) {
				t.Errorf("%s holds application state (%s)", path, leak)
			}
		}
		return nil
	})
}
