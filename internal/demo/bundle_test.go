package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/receipt"
)

// checkBundles checks every replay run under runs: each event that names
// a screenshot (step_finished, screenshot_after, or an irreversible
// action's screenshot_before) names a PNG of the bundle that its manifest
// lists, and every PNG of screenshots/ is named by one event; a
// run that acted in the browser has at least one; plan.json and
// receipt.json are there, valid against their schemas.
func checkBundles(t *testing.T, runs string) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(runs, "*"))
	if err != nil {
		t.Fatal(err)
	}
	shots := 0
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, evidence.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		var m evidence.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		dispatched := false
		f, err := os.Open(filepath.Join(dir, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev evidence.Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatal(err)
			}
			dispatched = dispatched || ev.Type == "action_dispatched"
			// A step's screen after (step_finished, or screenshot_after when
			// deferred) and an irreversible action's screen before
			// (action_dispatched, dispatch_failed).
			for _, key := range []string{"screenshot", "screenshot_before"} {
				rel, _ := ev.Data[key].(string)
				if rel == "" {
					continue
				}
				named[rel] = true
				if _, ok := m.Files[rel]; !ok {
					t.Errorf("%s: step %s names %s, which the manifest does not list", dir, ev.StepID, rel)
				}
				img, err := os.ReadFile(filepath.Join(dir, rel))
				if err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				if _, err := png.Decode(bytes.NewReader(img)); err != nil {
					t.Errorf("%s: %s: %v", dir, rel, err)
				}
				shots++
			}
		}
		f.Close()
		files, _ := filepath.Glob(filepath.Join(dir, evidence.ScreenshotDir, "*"))
		for _, p := range files {
			if rel := evidence.ScreenshotDir + "/" + filepath.Base(p); !named[rel] {
				t.Errorf("%s: %s is named by no event", dir, rel)
			}
		}
		if dispatched && len(named) == 0 {
			t.Errorf("%s: the run acted in the browser but holds no screenshot", dir)
		}
		for name, kind := range map[string]receipt.Kind{evidence.PlanFile: receipt.KindPlan, evidence.ReceiptFile: receipt.KindReceipt} {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			if err := receipt.Validate(kind, raw); err != nil {
				t.Errorf("%s: %s: %v", dir, name, err)
			}
			if _, ok := m.Files[name]; !ok {
				t.Errorf("%s: the manifest does not cover %s", dir, name)
			}
		}
	}
	if shots == 0 {
		t.Errorf("no screenshot under %s", runs)
	}
}
