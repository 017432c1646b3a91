package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/surface/browser"
)

// driftResults is the drift phase: the reference lookup replayed on
// generated UI variants of the mock app (internal/mockapp/drift.go).
type driftResults struct {
	Variants      int `json:"variants"`
	Benign        int `json:"benign"`
	BenignSuccess int `json:"benign_success"`
	// BenignFalseHalt counts benign variants that halted with nothing
	// answered: safe, but a miss.
	BenignFalseHalt int `json:"benign_false_halt"`
	Semantic        int `json:"semantic"`
	SemanticHalted  int `json:"semantic_halted"` // halted with a right code
	// SemanticHaltedOtherCode halted (NEEDS_HUMAN or FAILED) with a code
	// outside the change's right codes: safe, but reported.
	SemanticHaltedOtherCode int `json:"semantic_halted_other_code"`
	// SilentWrong counts runs that returned a wrong answer or touched a
	// wrong control: outputs that differ from the fixture's on a benign
	// variant, any answer (SUCCESS or a business outcome) on a semantic
	// variant, or any decoy hit. It must be 0.
	SilentWrong int             `json:"silent_wrong"`
	DecoyHits   int             `json:"decoy_hits"`
	Problems    []driftOutcome  `json:"problems"`
	Results     []driftOutcome  `json:"results"`
	RightCodes  map[string]any  `json:"right_codes"`
	Definitions []string        `json:"definitions"`
	Codes       map[string]int  `json:"codes"`
	Rungs       map[string]int  `json:"rungs"`
	Extra       *driftExtraInfo `json:"extra,omitempty"`
}

type driftExtraInfo struct {
	Workers int `json:"workers"`
}

// driftOutcome is one variant's replay.
type driftOutcome struct {
	Variant     string              `json:"variant"`
	Kind        string              `json:"kind"`
	Change      string              `json:"change,omitempty"`
	Detail      string              `json:"detail,omitempty"`
	Features    []string            `json:"features,omitempty"`
	Layout      map[string][]string `json:"layout,omitempty"`
	Expected    string              `json:"expected"`
	Status      string              `json:"status"`
	FailureCode string              `json:"failure_code,omitempty"`
	Message     string              `json:"message,omitempty"`
	Outputs     map[string]any      `json:"outputs,omitempty"`
	DecoyHits   int                 `json:"decoy_hits"`
	Verdict     string              `json:"verdict"` // ok, benign_failed, halted_other_code, silent_wrong
	Seconds     float64             `json:"seconds"`
	DriftScore  float64             `json:"drift_score"`
	Rungs       map[string]int      `json:"rungs,omitempty"`
}

// driftJob is one variant to replay.
type driftJob struct {
	kind   string
	seed   int64
	change string
}

func runDrift(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	jobs := driftJobs(c)
	all, err := replayDriftJobs(ctx, c, jobs, progress)
	if err != nil {
		return err
	}
	if len(all) != len(jobs) {
		return fmt.Errorf("%d of %d variants ran", len(all), len(jobs))
	}
	res.Drift = summariseDrift(all, c.driftWorkers)
	return nil
}

// driftJobs lists the variants to replay: c.driftBenign seeded benign
// mixes, then each named benign change, then each semantic change.
func driftJobs(c *config) []driftJob {
	var jobs []driftJob
	for i := range c.driftBenign {
		jobs = append(jobs, driftJob{kind: mockapp.DriftBenign, seed: int64(i + 1)})
	}
	for i, ch := range mockapp.DriftBenignChanges {
		jobs = append(jobs, driftJob{kind: mockapp.DriftBenign, seed: int64(i + 1), change: ch})
	}
	for i, ch := range mockapp.DriftChanges {
		jobs = append(jobs, driftJob{kind: mockapp.DriftSemantic, seed: int64(i + 1), change: ch})
	}
	return jobs
}

// replayDriftJobs replays jobs on c.driftWorkers workers, each with its own
// app and session of one browser, and returns their outcomes sorted by
// kind and variant.
func replayDriftJobs(ctx context.Context, c *config, jobs []driftJob, progress func(string, ...any)) ([]driftOutcome, error) {
	tmp, err := os.MkdirTemp("", "cua-bench-drift-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	eng, err := newEngine(c.root, filepath.Join(tmp, "data"), "drift")
	if err != nil {
		return nil, err
	}
	br, err := browser.Launch(ctx, browser.Options{ExecPath: c.execPath})
	if err != nil {
		return nil, err
	}
	defer br.Close()

	queue := make(chan driftJob)
	outcomes := make(chan driftOutcome, len(jobs))
	errc := make(chan error, c.driftWorkers)
	var wg sync.WaitGroup
	for range c.driftWorkers {
		wg.Go(func() {
			if err := driftWorker(ctx, br, eng, queue, outcomes); err != nil {
				errc <- err
			}
		})
	}
	go func() {
		defer close(queue)
		for _, j := range jobs {
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	done := make(chan struct{})
	var all []driftOutcome
	go func() {
		defer close(done)
		for o := range outcomes {
			all = append(all, o)
			if o.Verdict != mockapp.VerdictOK {
				progress("drift: %s: %s (%s %s %s)", o.Variant, o.Verdict, o.Status, o.FailureCode, o.Message)
			}
		}
	}()
	wg.Wait()
	close(outcomes)
	<-done
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	slices.SortFunc(all, func(a, b driftOutcome) int {
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind)
		}
		return strings.Compare(a.Variant, b.Variant)
	})
	return all, nil
}

// summariseDrift counts the outcomes by kind and verdict.
func summariseDrift(all []driftOutcome, workers int) *driftResults {
	d := &driftResults{
		Results: all, Codes: map[string]int{}, Rungs: map[string]int{}, Extra: &driftExtraInfo{Workers: workers},
		RightCodes: map[string]any{},
		Definitions: []string{
			"benign success: SUCCESS with savings_balance=1234.56 status=Active as_of=2026-11-30 and no decoy hit; benign variants are seeded feature mixes plus the named changes " + strings.Join(mockapp.DriftBenignChanges, ", "),
			"benign_failed (false halt): a benign variant that halted with nothing answered: safe, reported",
			"semantic halt: NEEDS_HUMAN or FAILED with one of the change family's right codes, no outputs, no decoy hit",
			"silent wrong: outputs that differ from the fixture on a benign variant, any answer (SUCCESS or business outcome) on a semantic variant, or any decoy hit (a wrong control clicked or a decoy link followed)",
			"duplicated controls submit to decoy routes that show an archived record with other values, so a wrong click is both a decoy hit and a wrong output",
		},
	}
	for prefix, codes := range mockapp.DriftRightCodes {
		d.RightCodes[prefix+"*"] = codes
	}
	for _, o := range all {
		d.Variants++
		d.DecoyHits += o.DecoyHits
		if o.FailureCode != "" {
			d.Codes[o.FailureCode]++
		}
		for r, n := range o.Rungs {
			d.Rungs[r] += n
		}
		switch o.Kind {
		case mockapp.DriftBenign:
			d.Benign++
			switch o.Verdict {
			case mockapp.VerdictOK:
				d.BenignSuccess++
			case mockapp.VerdictFalseHalt:
				d.BenignFalseHalt++
			}
		default:
			d.Semantic++
			switch o.Verdict {
			case mockapp.VerdictOK:
				d.SemanticHalted++
			case mockapp.VerdictHaltedOtherCode:
				d.SemanticHaltedOtherCode++
			}
		}
		if o.Verdict == mockapp.VerdictSilentWrong {
			d.SilentWrong++
		}
		if o.Verdict != mockapp.VerdictOK {
			d.Problems = append(d.Problems, o)
		}
	}
	return d
}

// driftWorker replays variants on its own app and session.
func driftWorker(ctx context.Context, br *browser.Browser, eng *engine, queue <-chan driftJob, out chan<- driftOutcome) error {
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	sess, err := br.NewSession(ctx)
	if err != nil {
		return err
	}
	defer sess.Close()
	// Sign on once on the undrifted app.
	if rec, err := eng.run(ctx, sess, app.URL()); err != nil || rec.Status != domain.StatusSuccess {
		if err == nil {
			err = fmt.Errorf("%s %s: %s", rec.Status, rec.FailureCode, rec.Message)
		}
		return fmt.Errorf("drift sign-on lookup: %w", err)
	}
	for j := range queue {
		o, err := replayVariant(ctx, eng, sess, app.URL(), j)
		if err != nil {
			return err
		}
		out <- o
	}
	return nil
}

func replayVariant(ctx context.Context, eng *engine, sess *browser.Session, base string, j driftJob) (driftOutcome, error) {
	ctl := mockapp.NewClient(base, nil)
	req := mockapp.DriftSpec{Kind: j.kind, Seed: j.seed, Change: j.change}
	v, err := ctl.SetDrift(ctx, req)
	if err != nil {
		return driftOutcome{}, err
	}
	if v.Drift == nil {
		return driftOutcome{}, fmt.Errorf("drift %+v was not set", req)
	}
	o := driftOutcome{Variant: v.Drift.String(), Kind: v.Drift.Kind, Change: v.Drift.Change, Detail: v.Drift.Detail,
		Features: v.Drift.Features, Layout: v.Drift.Layout}
	start := time.Now()
	rec, err := eng.run(ctx, sess, base)
	o.Seconds = round(time.Since(start).Seconds(), 2)
	if err != nil {
		return o, fmt.Errorf("%s: %w", o.Variant, err)
	}
	after, err := ctl.Drift(ctx)
	if err != nil {
		return o, err
	}
	if _, err := ctl.SetDrift(ctx, mockapp.DriftSpec{Kind: mockapp.DriftOff}); err != nil {
		return o, err
	}
	o.Status, o.FailureCode, o.Message = string(rec.Status), string(rec.FailureCode), rec.Message
	o.Outputs, o.DecoyHits, o.DriftScore = rec.Outputs, after.DecoyHits, round(rec.DriftScore, 2)
	if len(rec.StrategyMix) > 0 {
		o.Rungs = map[string]int{}
		for s, n := range rec.StrategyMix {
			o.Rungs[string(s)] = n
		}
	}
	outs := make(map[string]string, len(rec.Outputs))
	for k, v := range rec.Outputs {
		outs[k] = fmt.Sprint(v)
	}
	o.Expected = mockapp.DriftExpected(j.kind, j.change)
	o.Verdict = mockapp.JudgeDrift(mockapp.DriftRun{
		Kind: j.kind, Change: j.change, Status: string(rec.Status), FailureCode: string(rec.FailureCode),
		Outputs: outs, DecoyHits: o.DecoyHits,
	})
	return o, nil
}
