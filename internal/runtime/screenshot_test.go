package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

// shooter is the sim surface with the masked screenshot ability: it
// records the boxes it was asked to paint, and reports a change after its
// next unsteady shots, as a page that moved while it was captured.
type shooter struct {
	*sim.Surface
	boxes    [][]domain.Rect
	unsteady int
	justShot bool
}

var _ surface.MaskedScreenshotter = (*shooter)(nil)

func (s *shooter) MaskedScreenshot(_ context.Context, boxes []domain.Rect) ([]byte, error) {
	s.boxes = append(s.boxes, boxes)
	s.justShot = true
	return []byte("\x89PNG\r\n\x1a\nmasked"), nil
}

func (s *shooter) ChangedSince(ctx context.Context, since uint64) (bool, error) {
	if s.justShot && s.unsteady > 0 {
		s.unsteady--
		s.justShot = false
		return true, nil
	}
	s.justShot = false
	return s.Surface.ChangedSince(ctx, since)
}

func shotRun(t *testing.T, surf surface.Surface) (*runtime.Run, *runtime.Dispatcher) {
	t.Helper()
	return shotRunAt(t, surf, domain.EvidenceFull)
}

// shotRunAt is shotRun at an evidence level.
func shotRunAt(t *testing.T, surf surface.Surface, level domain.EvidenceLevel) (*runtime.Run, *runtime.Dispatcher) {
	t.Helper()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run, err := runtime.NewRun(runtime.RunConfig{Base: runtime.Base{Now: func() time.Time { return clock }},
		ID: "run-shot", BaseURL: base, Redactor: redact.New(), DataDir: t.TempDir(), Lease: hitl.NewLease("automation"), Holder: "automation",
		EvidenceLevel: level})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"app.test"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := run.Dispatcher(surf, pol)
	if err != nil {
		t.Fatal(err)
	}
	return run, d
}

func TestStepScreenshot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		unsteady int
		want     string // the path returned; "" for none
		shots    int
	}{
		{"steady screen", 0, "screenshots/step-004.png", 1},
		{"changed once, retaken", 1, "screenshots/step-004.png", 2},
		{"never steady: no screenshot", 10, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &shooter{Surface: sim.New(newLoginApp()), unsteady: tt.unsteady}
			t.Cleanup(func() { _ = s.Close() })
			run, d := shotRun(t, s)
			got := run.StepScreenshot(t.Context(), d, 4, "s4", "")
			if got != tt.want || len(s.boxes) != tt.shots {
				t.Fatalf("StepScreenshot = %q after %d shots, want %q after %d", got, len(s.boxes), tt.want, tt.shots)
			}
			// The password field's box is painted, whatever the attempt.
			for _, boxes := range s.boxes {
				if len(boxes) != 1 || boxes[0] != (domain.Rect{X: 8, Y: 8 + 28*2, W: 400, H: 24}) {
					t.Errorf("boxes %+v, want the password field's", boxes)
				}
			}
			_, err := os.Stat(filepath.Join(run.Evidence.Dir(), "screenshots", "step-004.png"))
			if (err == nil) != (tt.want != "") {
				t.Errorf("file present = %v, want %v", err == nil, tt.want != "")
			}
		})
	}
}

// TestStepScreenshotNeedsMasking: a surface that cannot mask gives no
// screenshot at all, never a raw one.
func TestStepScreenshotNeedsMasking(t *testing.T) {
	t.Parallel()
	s := sim.New(newLoginApp())
	t.Cleanup(func() { _ = s.Close() })
	run, d := shotRun(t, s)
	if _, err := d.MaskedScreenshot(t.Context()); !errors.Is(err, surface.ErrNoFrame) {
		t.Errorf("MaskedScreenshot on a surface without the ability: %v, want ErrNoFrame", err)
	}
	if got := run.StepScreenshot(t.Context(), d, 1, "s1", ""); got != "" {
		t.Errorf("StepScreenshot = %q, want none", got)
	}
	if _, err := os.Stat(filepath.Join(run.Evidence.Dir(), "screenshots")); err == nil {
		t.Error("a screenshots folder was made")
	}
}

// TestStepScreenshotReusesAnUnchangedScreen: a step that neither
// dispatched nor changed the screen names the last screenshot instead of
// taking another; a dispatch takes a new one.
func TestStepScreenshotReusesAnUnchangedScreen(t *testing.T) {
	t.Parallel()
	s := &shooter{Surface: sim.New(newLoginApp())}
	t.Cleanup(func() { _ = s.Close() })
	run, d := shotRun(t, s)
	first := run.StepScreenshot(t.Context(), d, 1, "s1", "")
	if again := run.StepScreenshot(t.Context(), d, 2, "s2", ""); again != first || first != "screenshots/step-001.png" || len(s.boxes) != 1 {
		t.Fatalf("second step named %q (first %q) after %d shots; want the first, one shot", again, first, len(s.boxes))
	}
	snap, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(t.Context(), snap, clickGo(), ""); err != nil {
		t.Fatal(err)
	}
	if third := run.StepScreenshot(t.Context(), d, 3, "s3", ""); third != "screenshots/step-003.png" || len(s.boxes) != 2 {
		t.Errorf("after a dispatch: %q after %d shots, want step-003.png after 2", third, len(s.boxes))
	}
}

// TestIrreversibleActionIsPicturedBefore: once an irreversible action is
// authorized, the screen it was authorized on is pictured, masked, before
// it is sent, as step-NNN-before.png of the step result it belongs to,
// and its action_dispatched names it; a safe action is not pictured
// before. The step's own screenshot after is step-NNN.png.
func TestIrreversibleActionIsPicturedBefore(t *testing.T) {
	t.Parallel()
	s := &shooter{Surface: sim.New(newLoginApp())}
	t.Cleanup(func() { _ = s.Close() })
	run, err := runtime.NewRun(runtime.RunConfig{ID: "run-irrev", BaseURL: base, Redactor: redact.New(), DataDir: t.TempDir(),
		Lease: hitl.NewLease("automation"), Holder: "automation"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"app.test"}, AllowIrreversible: true,
		ContentHash: "sha256:abc", Approval: &policy.Approval{Capability: "bank.close@1.0.0", ContentHash: "sha256:abc", Approver: "reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := run.Dispatcher(s, pol)
	if err != nil {
		t.Fatal(err)
	}
	run.StepScreenshot(t.Context(), d, 3, "s3", "")
	snap, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	del := domain.Action{Type: domain.ActClick, StepID: "del", Target: target("button", "Delete account"), Risk: domain.RiskIrreversible}
	if _, err := d.Act(t.Context(), snap, del, ""); err != nil {
		t.Fatal(err)
	}
	if after := run.StepScreenshot(t.Context(), d, 4, "del", evidence.ReasonAfterElevated); after != "screenshots/step-004.png" {
		t.Errorf("the step's screenshot after = %q, want screenshots/step-004.png", after)
	}
	shots := len(s.boxes)
	if snap, err = d.Observe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(t.Context(), snap, clickGo(), ""); err != nil {
		t.Fatal(err)
	}
	if len(s.boxes) != shots {
		t.Fatalf("a safe click was pictured before it was sent (%d shots)", len(s.boxes)-shots)
	}
	if err := run.Evidence.Sync(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(run.Evidence.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"screenshot_before":"screenshots/step-004-before.png"`); n != 1 || strings.Count(string(raw), "screenshot_before") != 1 {
		t.Errorf("events name the picture before %d times, want once (the irreversible click's):\n%s", n, raw)
	}
	if _, err := os.Stat(filepath.Join(run.Evidence.Dir(), "screenshots", "step-004-before.png")); err != nil {
		t.Errorf("picture before: %v", err)
	}
	if strings.Contains(string(raw), "screenshot_after") {
		t.Errorf("a step pictured after when it finished got a deferred picture too:\n%s", raw)
	}
}
