package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/cuahq/cua/internal/mockapp"
)

// coldStart is the cold-start phase: the real cua binary, from the moment
// the process is started to its first dispatched action (the entry
// navigation), read from the timestamps of its evidence events.
type coldStart struct {
	Runs int `json:"runs"`
	// ToFirstDispatch: process start → start of the first dispatched action
	// (its action_dispatched event's time minus its duration).
	ToFirstDispatch dist `json:"to_first_dispatch"`
	// ToFirstClick: process start → start of the first click (after the
	// entry navigation and the sign-on prerequisite's typing).
	ToFirstClick dist `json:"to_first_click"`
	// Total: process start → exit, a whole lookup with sign-on.
	Total dist `json:"total"`
	// FloorToFirstDispatch: the bare-CDP floor of ToFirstDispatch, in this
	// process: start Chromium with cua's flags, attach its first tab, and
	// the moment Page.navigate is sent. Ratio is the medians' ratio.
	FloorToFirstDispatch dist     `json:"floor_to_first_dispatch"`
	Ratio                float64  `json:"ratio_vs_floor"`
	Method               []string `json:"method"`
}

func runCold(ctx context.Context, c *config, res *results) error {
	if _, err := os.Stat(c.cuaBin); err != nil {
		return fmt.Errorf("no cua binary at %s (make build): %w", c.cuaBin, err)
	}
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	tmp, err := os.MkdirTemp("", "cua-bench-cold-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var first, click, total, floor []float64
	for i := range c.cold {
		fl, err := floorCold(ctx, c, app.URL())
		if err != nil {
			return fmt.Errorf("cold floor: %w", err)
		}
		floor = append(floor, fl)
		dataDir := filepath.Join(tmp, fmt.Sprint(i))
		cmd := exec.CommandContext(ctx, c.cuaBin, "replay", filepath.Join(c.root, capabilityFile),
			"--input", "member_id="+member, "--base-url", app.URL(), "--data-dir", dataDir, "--browser", c.execPath, "--json")
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(),
			"CUA_SECRET_COREBANK_OPERATOR="+mockapp.DefaultOperator, "CUA_SECRET_COREBANK_PASSWORD="+mockapp.DefaultPassword)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		end := time.Now()
		if err != nil {
			return fmt.Errorf("cua replay: %w\n%s%s", err, stdout.String(), stderr.String())
		}
		var rec struct {
			Status string `json:"status"`
			RunID  string `json:"run_id"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rec); err != nil || rec.Status != "SUCCESS" {
			return fmt.Errorf("cua replay did not succeed: %s", stdout.String())
		}
		f, k, err := firstDispatches(filepath.Join(dataDir, "runs", rec.RunID, "events.jsonl"))
		if err != nil {
			return err
		}
		first = append(first, ms(f.Sub(start)))
		click = append(click, ms(k.Sub(start)))
		total = append(total, ms(end.Sub(start)))
	}
	res.ColdStart = &coldStart{
		Runs: c.cold, ToFirstDispatch: summarize(first), ToFirstClick: summarize(click), Total: summarize(total),
		FloorToFirstDispatch: summarize(floor),
		Method: []string{
			"bin/cua replay " + capabilityFile + " --input member_id=" + member + " against an in-process mock app, fresh data dir each run",
			"process start is taken just before fork/exec; the first dispatch is the first action_dispatched event's time minus its duration_ms",
			"floor: in this process, Chromium started with cua's flags (its first tab attached, no new browser context), timed to the moment Page.navigate is sent; runs alternate with cua's",
		},
	}
	if f := res.ColdStart.FloorToFirstDispatch.MedianMS; f > 0 {
		res.ColdStart.Ratio = res.ColdStart.ToFirstDispatch.MedianMS / f
	}
	return nil
}

// floorCold is the cheapest cold start to a first dispatch: launch
// Chromium with cua's flags, attach its first tab (chromedp enables the
// same domains cua's session does), send Page.navigate to base. It returns
// milliseconds from before the launch to the navigation being sent.
func floorCold(ctx context.Context, c *config, base string) (float64, error) {
	tmp, err := os.MkdirTemp("", "cua-bench-floor-cold-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	actx, allocCancel := chromedp.NewExecAllocator(context.WithoutCancel(ctx), floorAllocOptions(c, tmp)...)
	defer allocCancel()
	tabCtx, tabCancel := chromedp.NewContext(actx)
	defer tabCancel()
	if err := chromedp.Do(tabCtx); err != nil {
		return 0, err
	}
	sent := time.Since(start)
	t := chromedp.FromContext(tabCtx).Target
	if _, err := cdp.Call(tabCtx, t, page.Navigate, page.NavigateParams{URL: base}); err != nil {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(tabCtx, 5*time.Second)
	_ = chromedp.Cancel(cctx)
	cancel()
	return ms(sent), nil
}

// firstDispatches returns when the first action and the first click were
// dispatched, from an events.jsonl.
func firstDispatches(path string) (first, click time.Time, err error) {
	f, err := os.Open(path)
	if err != nil {
		return first, click, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev struct {
			At   string `json:"at"`
			Type string `json:"type"`
			Data struct {
				Action     string `json:"action"`
				DurationMS int64  `json:"duration_ms"`
			} `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "action_dispatched" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, ev.At)
		if err != nil {
			return first, click, fmt.Errorf("%s: event time %q: %w", path, ev.At, err)
		}
		began := at.Add(-time.Duration(ev.Data.DurationMS) * time.Millisecond)
		if first.IsZero() {
			first = began
		}
		if strings.EqualFold(ev.Data.Action, "click") {
			return first, began, nil
		}
	}
	if first.IsZero() {
		return first, click, fmt.Errorf("%s: no action_dispatched event", path)
	}
	return first, click, fmt.Errorf("%s: no click was dispatched", path)
}
