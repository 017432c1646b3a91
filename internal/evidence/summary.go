package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/fsx"
)

// EvidenceSummary is what a bundle's evidence level kept, as `cua verify`
// reports it: the level (from run_started), how many screenshots the
// bundle holds and why each was kept (screenshot_kept events, by reason),
// and how many steps recorded the digest of their redacted observation.
type EvidenceSummary struct {
	// Level is the run's evidence level; empty in a bundle written before
	// levels were recorded.
	Level string `json:"level,omitempty"`
	// Screenshots counts the PNGs under screenshots/.
	Screenshots int `json:"screenshots"`
	// Reasons counts the screenshot_kept events by reason.
	Reasons map[string]int `json:"reasons,omitempty"`
	// Unexplained counts the screenshots no screenshot_kept event names
	// (every one, in a bundle written before reasons were recorded).
	Unexplained int `json:"unexplained,omitempty"`
	// ObservationDigests counts the step_finished events that carry
	// observation_sha256.
	ObservationDigests int `json:"observation_digests"`
}

// String is the one-line form `cua verify` prints: "screenshots: 4
// (output 1, before_elevated 1, after_elevated 1, final 1); observation
// digests: 9; evidence level: decisive".
func (s EvidenceSummary) String() string {
	var parts []string
	order := Reasons()
	for _, r := range slices.Sorted(maps.Keys(s.Reasons)) {
		if !slices.Contains(order, r) {
			order = append(order, r) // a reason this build does not know
		}
	}
	for _, r := range order {
		if n := s.Reasons[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	if s.Unexplained > 0 {
		parts = append(parts, fmt.Sprintf("no reason recorded %d", s.Unexplained))
	}
	out := fmt.Sprintf("screenshots: %d", s.Screenshots)
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	out += fmt.Sprintf("; observation digests: %d", s.ObservationDigests)
	if s.Level != "" {
		out += "; evidence level: " + s.Level
	}
	return out
}

// summarizeEvidence fills rep.Evidence from the bundle's events and its
// screenshots on disk; a screenshot_kept naming a file the bundle does not
// hold is a reason.
func (rep *Report) summarizeEvidence(dir string, onDisk map[string]FileDigest) {
	sum := EvidenceSummary{Reasons: map[string]int{}}
	explained := map[string]bool{}
	raw, err := fsx.ReadFileNoFollow(filepath.Join(dir, "events.jsonl"), fsx.MaxBundleFile)
	if err != nil {
		return // checkChain gave the reason
	}
	for line := range bytes.Lines(raw) {
		var e struct {
			Type string `json:"type"`
			Data struct {
				Screenshot  string `json:"screenshot"`
				Reason      string `json:"reason"`
				Observation string `json:"observation_sha256"`
				Evidence    string `json:"evidence"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue // checkChain gave the reason
		}
		switch e.Type {
		case RunStarted{}.EventType():
			if sum.Level == "" {
				sum.Level = e.Data.Evidence
			}
		case StepFinished{}.EventType():
			if e.Data.Observation != "" {
				sum.ObservationDigests++
			}
		case ScreenshotKept{}.EventType():
			sum.Reasons[e.Data.Reason]++
			explained[e.Data.Screenshot] = true
			if _, ok := onDisk[e.Data.Screenshot]; !ok {
				rep.Reasons = append(rep.Reasons, fmt.Sprintf("events.jsonl: screenshot_kept names %s, which the bundle does not hold", e.Data.Screenshot))
			}
		}
	}
	for name := range onDisk {
		if strings.HasPrefix(name, ScreenshotDir+"/") && strings.HasSuffix(name, ".png") {
			sum.Screenshots++
			if !explained[name] {
				sum.Unexplained++
			}
		}
	}
	if len(sum.Reasons) == 0 {
		sum.Reasons = nil
	}
	rep.Evidence = &sum
}
