package e2e

import (
	"encoding/json"
	"testing"
)

// TestDemo runs the main job, `cua demo --json`, as `make demo` does, and
// checks every stage behaved as declared.
func TestDemo(t *testing.T) {
	t.Parallel()
	r := runBin(t, nil, "demo", "--json", "--capabilities", examples, "--cassette", "../examples/cassettes/savings_balance.json",
		"--desktop", "../internal/surface/desktop/testdata/capabilities/mousepad.write_note.yaml", "--data-dir", t.TempDir())
	var out struct {
		Passed bool `json:"passed"`
		Stages []struct {
			Name    string `json:"name"`
			Pass    bool   `json:"pass"`
			Problem string `json:"problem"`
			Skipped bool   `json:"skipped"`
			Detail  string `json:"detail"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("demo --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	if len(out.Stages) < 12 {
		t.Errorf("%d stages, want at least 12", len(out.Stages))
	}
	names := map[string]bool{}
	for _, s := range out.Stages {
		names[s.Name] = true
		if !s.Pass {
			t.Errorf("stage %q: %s", s.Name, s.Problem)
		}
		// A demo may skip the desktop stage on a machine without a
		// desktop session; this test may not (make deps installs one).
		if s.Skipped {
			t.Errorf("stage %q skipped: %s", s.Name, s.Detail)
		}
	}
	for _, want := range []string{"queue batch, a worker killed mid-batch", "takeover: worker's transfer finished in the console",
		"desktop: Mousepad note over AT-SPI"} {
		if !names[want] {
			t.Errorf("no stage %q", want)
		}
	}
	if !out.Passed || r.code != 0 {
		t.Errorf("demo verdict passed=%v exit %d", out.Passed, r.code)
	}
}
