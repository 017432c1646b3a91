package observer_test

import (
	"image/color"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/observer"
	"github.com/cuahq/cua/internal/redact"
)

// TestRunPageShowsWhyEachScreenshotWasKept: a decisive bundle (an output's
// screen named by its step and a screenshot_kept, and a final.png only a
// screenshot_kept names) is served with the reason next to each picture,
// each picture once; final.png is served like a step's.
func TestRunPageShowsWhyEachScreenshotWasKept(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	bun, err := evidence.Open(dataDir, "r-decisive", redact.New())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	app := func(step string, p evidence.Payload) {
		t.Helper()
		at = at.Add(100 * time.Millisecond)
		if err := bun.Append(evidence.NewEvent(at, domain.ActorAutomation, step, p)); err != nil {
			t.Fatal(err)
		}
	}
	app("", evidence.RunStarted{Capability: "member.lookup@1.0.0", ContentHash: "sha256:abc", BaseURL: "http://127.0.0.1:9/", Evidence: domain.EvidenceDecisive})
	app("open", evidence.StepFinished{Status: "ok", DurationMS: 5, ObservationSHA256: strings.Repeat("a", 64), Observation: `headings: "Search"`})
	step, err := bun.WriteScreenshot(evidence.ScreenshotName(2), testPNG(t, 320, 200, color.RGBA{R: 40, G: 120, B: 200, A: 255}))
	if err != nil {
		t.Fatal(err)
	}
	app("read", evidence.ScreenshotKept{Screenshot: step, Reason: evidence.ReasonOutput})
	app("read", evidence.StepFinished{Status: "ok", DurationMS: 5, Screenshot: step, ObservationSHA256: strings.Repeat("b", 64)})
	final, err := bun.WriteScreenshot(evidence.FinalScreenshotName, testPNG(t, 320, 200, color.RGBA{R: 200, G: 120, B: 40, A: 255}))
	if err != nil {
		t.Fatal(err)
	}
	app("", evidence.ScreenshotKept{Screenshot: final, Reason: evidence.ReasonFinal})
	app("", evidence.RunFinished{Status: domain.StatusSuccess})
	if err := bun.WriteRecord(&domain.RunRecord{SchemaVersion: 1, RunID: "r-decisive", Capability: "member.lookup@1.0.0", ContentHash: "sha256:abc",
		Status: domain.StatusSuccess, StartedAt: "2026-12-01T09:00:00Z", FinishedAt: "2026-12-01T09:00:01Z", Steps: []domain.StepResult{}}); err != nil {
		t.Fatal(err)
	}
	if err := bun.Close(); err != nil {
		t.Fatal(err)
	}
	rep := evidence.Verify(bun.Dir(), nil)
	if !rep.ShareReady || rep.Evidence.String() != "screenshots: 2 (output 1, final 1); observation digests: 2; evidence level: decisive" {
		t.Fatalf("verify: %v %s", rep.Reasons, rep.Evidence)
	}

	b := serve(t, dataDir, observer.Exposure{}, "")
	page := b.get(t, "/runs/r-decisive")
	for _, want := range []string{"step-002.png · kept: output", "final.png · kept: final"} {
		if !contains(page.body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	if n := strings.Count(string(page.body), `screenshots/step-002.png"`); n != 1 {
		t.Errorf("step-002.png pictured %d times, want once", n)
	}
	if shot := b.get(t, "/runs/r-decisive/screenshots/final.png"); shot.status != http.StatusOK || shot.header.Get("Content-Type") != "image/png" {
		t.Errorf("final.png: %d %s", shot.status, shot.header.Get("Content-Type"))
	}
}
