package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/fsx"
)

// keptScreens says which screens a run's bundle kept and why, from its
// screenshot_kept events: "screens kept: step-012-before.png
// (before_elevated), final.png (final)"; "screens kept: none" when its
// evidence level kept none, "" when the bundle cannot be read.
func keptScreens(dataDir, runID string) string {
	if dataDir == "" || runID == "" {
		return ""
	}
	raw, err := fsx.ReadFileNoFollow(filepath.Join(dataDir, "runs", runID, "events.jsonl"), fsx.MaxBundleFile)
	if err != nil {
		return ""
	}
	var kept []string
	level := ""
	for line := range bytes.Lines(raw) {
		var e struct {
			Type string `json:"type"`
			Data struct {
				Screenshot string `json:"screenshot"`
				Reason     string `json:"reason"`
				Evidence   string `json:"evidence"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		switch e.Type {
		case evidence.RunStarted{}.EventType():
			level = e.Data.Evidence
		case evidence.ScreenshotKept{}.EventType():
			kept = append(kept, fmt.Sprintf("%s (%s)", path.Base(e.Data.Screenshot), e.Data.Reason))
		}
	}
	if len(kept) == 0 {
		kept = []string{"none"}
	}
	out := "screens kept: " + strings.Join(kept, ", ")
	if level != "" {
		out += " [evidence " + level + "]"
	}
	return out
}
