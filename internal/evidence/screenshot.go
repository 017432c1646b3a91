package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// ScreenshotDir is the bundle folder that holds one masked PNG per step
// (the screen after it) and, for each irreversible action, the screen it
// was authorized on.
const ScreenshotDir = "screenshots"

var (
	screenshotName = regexp.MustCompile(`^(step-[0-9]{3,}(-before|-after)?|park-[0-9]{3,}|final)\.png$`)
	pngMagic       = []byte("\x89PNG\r\n\x1a\n")
)

// ScreenshotName is the file name of the screenshot taken after the n-th
// step result of a run (1-based, in the order of the record's steps):
// step-001.png, step-002.png, …
func ScreenshotName(n int) string { return fmt.Sprintf("step-%03d.png", n) }

// BeforeScreenshotName is the file name of the screenshot of the screen
// an irreversible action of the n-th step result was authorized on, taken
// just before it was sent: step-007-before.png beside step-007.png (the
// screen after the step). Its action_dispatched (or dispatch_failed)
// event names it as screenshot_before.
func BeforeScreenshotName(n int) string { return fmt.Sprintf("step-%03d-before.png", n) }

// AfterScreenshotName is the file name of the picture of the screen after
// the n-th step result, an irreversible step, when it could not be taken
// as step-NNN.png (a JavaScript dialog was open): step-007-after.png, the
// first screen painted after the step, which a screenshot_after event
// names.
func AfterScreenshotName(n int) string { return fmt.Sprintf("step-%03d-after.png", n) }

// ParkScreenshotName is the file name of the n-th screen (1-based) a run
// parked on, handed to a person: park-001.png, park-002.png, …
func ParkScreenshotName(n int) string { return fmt.Sprintf("park-%03d.png", n) }

// FinalScreenshotName is the file name of the screen a run ended on: the
// final screen of a run that ended SUCCESS, else the screen it halted or
// failed on (its screenshot_kept event's reason says which).
const FinalScreenshotName = "final.png"

// Why a screenshot was kept: the reason of its screenshot_kept event.
const (
	// ReasonOutput: the screen an output of the run was read from.
	ReasonOutput = "output"
	// ReasonBeforeElevated: the screen an elevated or irreversible action
	// was authorized on, just before it was sent.
	ReasonBeforeElevated = "before_elevated"
	// ReasonAfterElevated: the screen an elevated or irreversible step
	// left (or, when it could not be painted, the first screen painted
	// after it).
	ReasonAfterElevated = "after_elevated"
	// ReasonHalt: the screen a run stopped on for a person (NEEDS_HUMAN:
	// a gate, an escalation).
	ReasonHalt = "halt"
	// ReasonPark: the screen a run parked on, handed to a person.
	ReasonPark = "park"
	// ReasonFailure: the screen a run ended FAILED (or otherwise not
	// SUCCESS) on.
	ReasonFailure = "failure"
	// ReasonFinal: the screen a successful run ended on.
	ReasonFinal = "final"
	// ReasonFull: a step's screen kept only because the run's evidence
	// level is full.
	ReasonFull = "full"
)

// Reasons lists every screenshot reason, in the order a report gives
// them.
func Reasons() []string {
	return []string{ReasonOutput, ReasonBeforeElevated, ReasonAfterElevated, ReasonHalt, ReasonPark, ReasonFailure, ReasonFinal, ReasonFull}
}

// WriteScreenshot writes png, a screenshot whose sensitive and secret boxes
// the surface already painted black (surface.MaskedScreenshotter), as
// screenshots/<name> atomically, and returns its bundle-relative path
// ("screenshots/step-001.png"), the form a step_finished event records.
// The manifest written on Close covers it.
//
// It refuses a name not of the form ScreenshotName gives, data that is not
// a PNG, an existing file (evidence never rewrites) and a closed bundle.
// Safe for concurrent use.
func (b *Bundle) WriteScreenshot(name string, png []byte) (string, error) {
	if !screenshotName.MatchString(name) {
		return "", fmt.Errorf("evidence: bad screenshot name %q: want step-NNN.png, step-NNN-before.png, step-NNN-after.png, park-NNN.png or final.png", name)
	}
	if !bytes.HasPrefix(png, pngMagic) {
		return "", fmt.Errorf("evidence: screenshot %s is not a PNG", name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return "", errors.New("evidence: bundle closed")
	}
	dir := filepath.Join(b.dir, ScreenshotDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("evidence: create screenshot dir: %w", err)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("evidence: screenshot %s already written", name)
	}
	if err := writeAtomic(p, png); err != nil {
		return "", err
	}
	b.shots++
	return ScreenshotDir + "/" + name, nil
}

// Screenshots returns how many screenshots WriteScreenshot wrote.
func (b *Bundle) Screenshots() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.shots
}

// Control-plane records a bundle may hold beside the record (see
// internal/receipt): the run's action plan, its receipt and, when it
// stopped at a gate, the handoff gate.
const (
	PlanFile    = "plan.json"
	ReceiptFile = "receipt.json"
	GateFile    = "gate.json"
)

// WriteDocument writes v, redacted, as the bundle's JSON document name
// (PlanFile, ReceiptFile or GateFile) atomically, before Close writes the
// manifest over it. It refuses any other name and a closed bundle.
func (b *Bundle) WriteDocument(name string, v any) error {
	if name != PlanFile && name != ReceiptFile && name != GateFile {
		return fmt.Errorf("evidence: bad document name %q: want %s, %s or %s", name, PlanFile, ReceiptFile, GateFile)
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: encode %s: %w", name, err)
	}
	raw, err = b.red.JSON(raw)
	if err != nil {
		return fmt.Errorf("evidence: redact %s: %w", name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return errors.New("evidence: bundle closed")
	}
	return writeAtomic(filepath.Join(b.dir, name), append(raw, '\n'))
}
