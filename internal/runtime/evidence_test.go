package runtime_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface/sim"
)

// keptReasons reads a run's screenshot_kept events: "file reason" each.
func keptReasons(t *testing.T, run *runtime.Run) []string {
	t.Helper()
	if err := run.Evidence.Sync(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(run.Evidence.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(raw)) {
		var e struct {
			Type string                  `json:"type"`
			Data evidence.ScreenshotKept `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "screenshot_kept" {
			out = append(out, e.Data.Screenshot+" "+e.Data.Reason)
		}
	}
	return out
}

// TestDecisiveKeepsOnlyWhatTheEngineNames: under decisive a step with no
// reason costs no capture; an output's screen unchanged since the last
// picture is copied under its own name, not captured again; the final
// screen is kept; each file's screenshot_kept event says why.
func TestDecisiveKeepsOnlyWhatTheEngineNames(t *testing.T) {
	t.Parallel()
	s := &shooter{Surface: sim.New(newLoginApp())}
	t.Cleanup(func() { _ = s.Close() })
	run, d := shotRunAt(t, s, domain.EvidenceDecisive)
	if got := run.StepScreenshot(t.Context(), d, 1, "open", ""); got != "" || len(s.boxes) != 0 {
		t.Fatalf("a step with no reason: %q after %d captures, want none", got, len(s.boxes))
	}
	if got := run.StepScreenshot(t.Context(), d, 2, "read_a", evidence.ReasonOutput); got != "screenshots/step-002.png" || len(s.boxes) != 1 {
		t.Fatalf("an output's screen: %q after %d captures, want step-002.png after 1", got, len(s.boxes))
	}
	if got := run.StepScreenshot(t.Context(), d, 3, "read_b", evidence.ReasonOutput); got != "screenshots/step-003.png" || len(s.boxes) != 1 {
		t.Fatalf("an unchanged output screen: %q after %d captures, want a copy step-003.png, no capture", got, len(s.boxes))
	}
	if got := run.EndScreenshot(t.Context(), d, domain.StatusSuccess); got != "screenshots/final.png" || len(s.boxes) != 1 {
		t.Fatalf("final screen: %q after %d captures, want final.png copied", got, len(s.boxes))
	}
	want := []string{"screenshots/step-002.png output", "screenshots/step-003.png output", "screenshots/final.png final"}
	if got := keptReasons(t, run); !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if n := run.Evidence.Screenshots(); n != 3 {
		t.Errorf("%d files, want 3", n)
	}
}

// TestNoneKeepsOnlyAStoppedScreen: under none an output's screen is not
// kept and a successful end keeps nothing; a failed end keeps the screen
// it stopped on, reason failure; a halt's reason is halt.
func TestNoneKeepsOnlyAStoppedScreen(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status domain.RunStatus
		want   []string
	}{
		{domain.StatusSuccess, nil},
		{domain.StatusFailed, []string{"screenshots/final.png failure"}},
		{domain.StatusNeedsHuman, []string{"screenshots/final.png halt"}},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			t.Parallel()
			s := &shooter{Surface: sim.New(newLoginApp())}
			t.Cleanup(func() { _ = s.Close() })
			run, d := shotRunAt(t, s, domain.EvidenceNone)
			if got := run.StepScreenshot(t.Context(), d, 1, "read", evidence.ReasonOutput); got != "" {
				t.Errorf("none kept an output's screen: %q", got)
			}
			run.EndScreenshot(t.Context(), d, tt.status)
			if got := keptReasons(t, run); !slices.Equal(got, tt.want) {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStepObservation: the digest of the same screen is the same (its
// sequence number left out), a new screen's differs; the summary names
// the headings and, from the second step on, the nodes that appeared; a
// secret on screen never reaches the summary.
func TestStepObservation(t *testing.T) {
	t.Parallel()
	s := &shooter{Surface: sim.New(newLoginApp())}
	t.Cleanup(func() { _ = s.Close() })
	run, d := shotRunAt(t, s, domain.EvidenceDecisive)
	first := run.StepObservation(t.Context(), d)
	again := run.StepObservation(t.Context(), d)
	if len(first.SHA256) != 64 || first.SHA256 != again.SHA256 {
		t.Fatalf("digests %q and %q of one screen, want one 64-hex digest", first.SHA256, again.SHA256)
	}
	if !strings.Contains(first.Summary, `headings: "Sign in"`) || !strings.Contains(again.Summary, "new (0)") {
		t.Errorf("summaries %q, %q", first.Summary, again.Summary)
	}
	snap, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(t.Context(), snap, clickGo(), ""); err != nil {
		t.Fatal(err)
	}
	next := run.StepObservation(t.Context(), d)
	if next.SHA256 == first.SHA256 || !strings.Contains(next.Summary, `new (1): heading "Welcome"`) {
		t.Errorf("after a click: %+v", next)
	}

	red := redact.New()
	red.RegisterLiteral("hunter2hunter2")
	shown := &domain.UiSnapshot{Nodes: []domain.Node{{Role: "heading", Name: "Key hunter2hunter2"}}}
	_, rs, err := runtime.ObservationDigest(red, shown)
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := runtime.ObservationSummary(rs, nil); strings.Contains(sum, "hunter2") {
		t.Errorf("summary leaks a secret: %q", sum)
	}
	long := &domain.UiSnapshot{}
	for i := range 200 {
		long.Nodes = append(long.Nodes, domain.Node{Index: i, Role: "heading", Name: strings.Repeat("x", 50) + string(rune('a'+i%26))})
	}
	if sum, _ := runtime.ObservationSummary(long, map[string]bool{}); len(sum) > runtime.MaxObservationSummary {
		t.Errorf("summary of %d bytes, bound %d", len(sum), runtime.MaxObservationSummary)
	}
}

// TestFailedStepIsTheStoppedScreen: at every level a failed step's screen
// is kept (reason failure), and a run that ends on it unchanged keeps no
// second picture of it.
func TestFailedStepIsTheStoppedScreen(t *testing.T) {
	t.Parallel()
	for _, level := range []domain.EvidenceLevel{domain.EvidenceNone, domain.EvidenceDecisive, domain.EvidenceFull} {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			s := &shooter{Surface: sim.New(newLoginApp())}
			t.Cleanup(func() { _ = s.Close() })
			run, d := shotRunAt(t, s, level)
			if got := run.StepScreenshot(t.Context(), d, 3, "search", evidence.ReasonFailure); got != "screenshots/step-003.png" {
				t.Fatalf("failed step's screen: %q", got)
			}
			if got := run.EndScreenshot(t.Context(), d, domain.StatusNeedsHuman); got != "screenshots/step-003.png" {
				t.Errorf("end on the failed step's screen: %q, want its picture", got)
			}
			want := []string{"screenshots/step-003.png failure"}
			if got := keptReasons(t, run); !slices.Equal(got, want) || run.Evidence.Screenshots() != 1 || len(s.boxes) != 1 {
				t.Errorf("kept %q (%d files, %d captures), want %q", got, run.Evidence.Screenshots(), len(s.boxes), want)
			}
		})
	}
}
