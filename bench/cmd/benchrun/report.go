package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// goals judges the run against issue 5's targets.
func goals(res *results) []goal {
	var gs []goal
	if r := res.Replay; r != nil {
		gs = append(gs,
			goal{"warm lookup vs Playwright (median)", "cua ≤ 1.0× Playwright", fmt.Sprintf("%.2f×", r.RatioVsPlaywright), r.RatioVsPlaywright > 0 && r.RatioVsPlaywright <= 1.0},
			goal{"warm lookup vs the bare-CDP floor (median)", "cua ≤ 1.5× floor", fmt.Sprintf("%.2f×", r.RatioVsFloor), r.RatioVsFloor > 0 && r.RatioVsFloor <= 1.5},
			goal{"warm lookup vs the bare-CDP floor, issue 15 (median; cua with the capability's evidence, decisive by default, the floor none)", "cua ≤ 1.2× floor", fmt.Sprintf("%.2f×", r.RatioVsFloor), r.RatioVsFloor > 0 && r.RatioVsFloor <= 1.2},
		)
	}
	if c := res.ColdStart; c != nil {
		gs = append(gs, goal{"cold `cua replay` to the first dispatch (median)", "≤ 400 ms",
			fmt.Sprintf("%.0f ms (floor %.0f ms, %.2f×)", c.ToFirstDispatch.MedianMS, c.FloorToFirstDispatch.MedianMS, c.Ratio), c.ToFirstDispatch.MedianMS > 0 && c.ToFirstDispatch.MedianMS <= 400})
	}
	for _, s := range res.Scale {
		if s.Sessions == 8 {
			gs = append(gs, goal{"throughput with 8 concurrent sessions", "≥ 120 lookups/min", fmt.Sprintf("%.0f/min (p95 %.0f ms, %d failed)", s.LookupsPerMin, s.Latency.P95MS, s.Failed), s.LookupsPerMin >= 120 && s.Failed == 0})
		}
	}
	worst := -1.0
	for _, m := range res.Micro {
		if strings.HasPrefix(m.Name, "Resolve/") && strings.Contains(m.Name, "nodes=10k") && m.MSPerOp > worst {
			worst = m.MSPerOp
		}
	}
	if worst >= 0 {
		gs = append(gs, goal{"target resolution in a 10k-node snapshot (worst descriptor)", "< 1 ms", fmt.Sprintf("%.3f ms", worst), worst < 1})
	}
	for _, m := range res.Micro {
		if strings.HasPrefix(m.Name, "StableProgressKey/shared") {
			gs = append(gs, goal{"StableProgressKey, six levels sharing one child 64 times", "< 10 ms", fmt.Sprintf("%.3f ms", m.MSPerOp), m.MSPerOp < 10})
		}
	}
	if d := res.Drift; d != nil {
		gs = append(gs,
			goal{"drift: benign variants succeed", "100%", fmt.Sprintf("%d/%d", d.BenignSuccess, d.Benign), d.BenignSuccess == d.Benign},
			goal{"drift: semantic variants halt with a right code", "100%", fmt.Sprintf("%d/%d", d.SemanticHalted, d.Semantic), d.SemanticHalted == d.Semantic},
			goal{"drift: silent wrong results", "0", fmt.Sprint(d.SilentWrong), d.SilentWrong == 0},
		)
	}
	gs = append(gs, queueGoals(res)...)
	gs = append(gs, faultGoals(res)...)
	return append(gs, issue27Goals(res)...)
}

// queueGoals judges the batch, fleet and stay phases against issue 15's
// targets.
func queueGoals(res *results) []goal {
	var gs []goal
	if b := res.Batch; b != nil {
		for _, s := range b.Steps {
			if s.Sessions == 4 {
				gs = append(gs, goal{fmt.Sprintf("batch of %d lookups on %d cores at 4 sessions (%s, %s)", s.Rows, res.Machine.CPUs, s.Mode, s.Capability), "≥ 300 lookups/min, 0 wrong",
					fmt.Sprintf("%.0f/min, %d wrong, %d failed", s.LookupsPerMin, s.Wrong, s.Failed), s.LookupsPerMin >= 300 && s.Wrong == 0 && s.Failed == 0})
			}
		}
		wrong := 0
		for _, s := range b.Steps {
			wrong += s.Wrong
		}
		gs = append(gs, goal{"batch: wrong answers over every step", "0", fmt.Sprint(wrong), wrong == 0})
	}
	if f := res.Fleet; f != nil {
		gs = append(gs, goal{fmt.Sprintf("fleet: %d workers on one PostgreSQL drain %d lookups", f.Processes, f.Jobs), "0 lost, each done once, 0 wrong, both workers used",
			fmt.Sprintf("%d lost, %d done twice, %d wrong, split %s", f.Lost, f.DoneMoreThanOnce, f.Wrong, splitString(f.PerWorker)),
			f.Lost == 0 && f.DoneMoreThanOnce == 0 && f.Wrong == 0 && len(f.PerWorker) == f.Processes})
	}
	if s := res.Stay; s != nil {
		gs = append(gs, goal{"stay on the page: cua with reentry vs Playwright's loop (median)", "cua ≤ 1.0× Playwright",
			fmt.Sprintf("%.2f× (%s, warm %v, %d of %d reentered)", s.Ratio, s.CuaCapability, s.CuaWarm, s.CuaReentered, s.Cua.N),
			s.Ratio > 0 && s.Ratio <= 1.0 && s.CuaCapability == quickRef && s.CuaWarm && s.CuaReentered > 0})
	}
	return gs
}

// splitString prints a per-worker split in a stable order.
func splitString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for i, k := range keys {
		parts = append(parts, fmt.Sprintf("worker %d: %d", i+1, m[k]))
	}
	return strings.Join(parts, ", ")
}

// printQueue prints the batch, fleet and stay tables.
func printQueue(w io.Writer, res *results) {
	if b := res.Batch; b != nil && len(b.Steps) > 0 {
		fmt.Fprintln(w, "\n### `cua batch` of the lookups (own data dir per step)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| sessions | mode | capability | rows | lookups/min | wall s | run p50 ms | run p95 ms | done | failed | needs-human | wrong |")
		fmt.Fprintln(w, "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, s := range b.Steps {
			fmt.Fprintf(w, "| %d | %s | %s | %d | %.0f | %.1f | %.0f | %.0f | %d | %d | %d | %d |\n", s.Sessions, s.Mode, s.Capability, s.Rows, s.LookupsPerMin, s.WallSeconds,
				s.RunDuration.MedianMS, s.RunDuration.P95MS, s.Done, s.Failed, s.NeedsHuman, s.Wrong)
		}
		for _, s := range b.Steps {
			for _, x := range s.Samples {
				fmt.Fprintf(w, "- %d sessions %s: %s\n", s.Sessions, s.Mode, oneLine(x))
			}
		}
	}
	if f := res.Fleet; f != nil {
		fmt.Fprintf(w, "\n### Fleet: %d `cua worker --workers %d` on one PostgreSQL, %d lookups\n\n", f.Processes, f.WorkersEach, f.Jobs)
		fmt.Fprintln(w, "| lookups/min | drain s | run p50 ms | run p95 ms | per worker | lost | done twice | retried | wrong |")
		fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
		fmt.Fprintf(w, "| %.0f | %.1f | %.0f | %.0f | %s | %d | %d | %d | %d |\n", f.LookupsPerMin, f.DrainSeconds, f.RunDuration.MedianMS,
			f.RunDuration.P95MS, splitString(f.PerWorker), f.Lost, f.DoneMoreThanOnce, f.Retried, f.Wrong)
		for _, x := range f.Samples {
			fmt.Fprintf(w, "- %s\n", oneLine(x))
		}
	}
	if s := res.Stay; s != nil {
		fmt.Fprintf(w, "\n### Stay on the page (%d lookups each)\n\n", s.Lookups)
		fmt.Fprintln(w, "| way | median ms | p95 ms | min ms | max ms | failed |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
		fmt.Fprintf(w, "| Playwright loop (search, read, back) | %.1f | %.1f | %.1f | %.1f | %d |\n", s.Playwright.MedianMS, s.Playwright.P95MS, s.Playwright.MinMS, s.Playwright.MaxMS, s.Errors["playwright"])
		fmt.Fprintf(w, "| Playwright search and read alone | %.1f | %.1f | %.1f | %.1f | |\n", s.PlaywrightSearch.MedianMS, s.PlaywrightSearch.P95MS, s.PlaywrightSearch.MinMS, s.PlaywrightSearch.MaxMS)
		fmt.Fprintf(w, "| cua batch --sessions 1, %s (warm %v) | %.1f | %.1f | %.1f | %.1f | %d |\n", s.CuaCapability, s.CuaWarm, s.Cua.MedianMS, s.Cua.P95MS, s.Cua.MinMS, s.Cua.MaxMS, s.Errors["cua"])
		fmt.Fprintf(w, "| cua, between consecutive runs' ends (queue pickup included) | %.1f | %.1f | %.1f | %.1f | |\n", s.CuaGap.MedianMS, s.CuaGap.P95MS, s.CuaGap.MinMS, s.CuaGap.MaxMS)
		fmt.Fprintf(w, "\ncua / Playwright loop: **%.2f×** median (%.2f× p95); cua runs that reentered: %d of %d\n", s.Ratio, s.P95Ratio, s.CuaReentered, s.Cua.N)
		for _, x := range s.Samples {
			fmt.Fprintf(w, "- %s\n", oneLine(x))
		}
	}
}

// printTable prints the results as Markdown tables.
func printTable(w io.Writer, res *results) {
	m := res.Machine
	fmt.Fprintf(w, "\n## cua benchmarks, %s\n\n", res.GeneratedAt)
	fmt.Fprintf(w, "%d CPUs, %s, %s, %s, node %s, playwright-core %s; load average %s at start, %s at end; %.0f s in all.\n",
		m.CPUs, m.OS, m.Go, m.Chromium, m.Node, m.PlaywrightCore, m.LoadAvgStart, m.LoadAvgEnd, res.TotalSeconds)

	if r := res.Replay; r != nil {
		fmt.Fprintf(w, "\n### Warm replay of the reference lookup (%d each, interleaved)\n\n", r.Lookups)
		fmt.Fprintln(w, "| way | median ms | p95 ms | min ms | max ms | failed | CPU ms per lookup, client + Chromium |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		row := func(name, key string, d dist) {
			c := r.CPU[key]
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %.1f | %d | %.0f + %.0f |\n", name, d.MedianMS, d.P95MS, d.MinMS, d.MaxMS, r.Errors[key], c.Client, c.Browser)
		}
		row("cua (engine in-process)", "cua", r.Cua)
		row("Playwright (getByRole)", "playwright", r.Playwright)
		row("floor (bare chromedp)", "floor", r.Floor)
		if r.CuaNoEvidence.N > 0 {
			row("cua, no evidence bundle (no event log, no screenshots)", "cua-no-evidence", r.CuaNoEvidence)
		}
		fmt.Fprintf(w, "\ncua / Playwright: **%.2f×** median (%.2f× p95); cua / floor: **%.2f×** median (%.2f× p95)\n",
			r.RatioVsPlaywright, r.P95RatioVsPW, r.RatioVsFloor, r.P95RatioVsFloor)
		if r.NoEvidenceVsFloor > 0 {
			fmt.Fprintf(w, "cua without an evidence bundle / floor: **%.2f×** median\n", r.NoEvidenceVsFloor)
		}
	}
	if c := res.ColdStart; c != nil {
		fmt.Fprintf(w, "\n### Cold start of `cua replay` (%d runs, fresh browser, signs on)\n\n", c.Runs)
		fmt.Fprintln(w, "| from process start to | median ms | p95 ms |")
		fmt.Fprintln(w, "| --- | ---: | ---: |")
		fmt.Fprintf(w, "| first action dispatched (entry navigation) | %.0f | %.0f |\n", c.ToFirstDispatch.MedianMS, c.ToFirstDispatch.P95MS)
		fmt.Fprintf(w, "| first click (sign-on button) | %.0f | %.0f |\n", c.ToFirstClick.MedianMS, c.ToFirstClick.P95MS)
		fmt.Fprintf(w, "| exit, lookup done | %.0f | %.0f |\n", c.Total.MedianMS, c.Total.P95MS)
		if c.Ratio > 0 {
			fmt.Fprintf(w, "| floor: Chromium started, first tab attached, Page.navigate sent | %.0f | %.0f |\n", c.FloorToFirstDispatch.MedianMS, c.FloorToFirstDispatch.P95MS)
			fmt.Fprintf(w, "\ncua / floor to the first dispatch: **%.2f×** median\n", c.Ratio)
		}
	}
	if len(res.Scale) > 0 {
		fmt.Fprintf(w, "\n### Concurrent replays on one browser, one isolated context each (%.0f s per step)\n\n", res.Config["scale_seconds"])
		fmt.Fprintln(w, "| sessions | lookups/min | median ms | p95 ms | failed | cua peak RSS MB (per session) | Chromium peak RSS MB, procs (per session) | Chromium peak PSS MB (per session) | CPU ms per lookup, cua + Chromium |")
		fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, s := range res.Scale {
			perLookup := func(sec float64) float64 {
				if s.Lookups == 0 {
					return 0
				}
				return sec * 1000 / float64(s.Lookups)
			}
			fmt.Fprintf(w, "| %d | %.0f | %.0f | %.0f | %d | %.0f (%.1f) | %.0f, %d (%.0f) | %.0f (%.0f) | %.0f + %.0f |\n",
				s.Sessions, s.LookupsPerMin, s.Latency.MedianMS, s.Latency.P95MS, s.Failed, s.CuaPeakRSSMB, s.CuaRSSPerSessionMB,
				s.ChromiumPeakRSSMB, s.ChromiumProcesses, s.ChromiumRSSPerSessionMB, s.ChromiumPeakPSSMB, s.ChromiumPSSPerSessionMB,
				perLookup(s.CuaCPUSeconds), perLookup(s.ChromiumCPUSeconds))
		}
	}
	if len(res.Micro) > 0 {
		fmt.Fprintln(w, "\n### Engine micro-benchmarks (go test -bench)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| benchmark | ms/op | allocs/op | B/op |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
		for _, b := range res.Micro {
			fmt.Fprintf(w, "| %s | %s | %d | %d |\n", b.Name, fmtMS(b.MSPerOp), b.AllocsPerOp, b.BytesPerOp)
		}
	}
	printDrift(w, res.Drift)
	printQueue(w, res)
	printFaults(w, res)
	printIssue27(w, res)
	if len(res.Goals) > 0 {
		fmt.Fprintln(w, "\n### Goals (issues 5, 15, 26 and 27)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| goal | target | measured | met |")
		fmt.Fprintln(w, "| --- | --- | --- | --- |")
		for _, g := range res.Goals {
			met := "no"
			if g.Met {
				met = "yes"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", g.Goal, g.Target, g.Measured, met)
		}
	}
	fmt.Fprintln(w)
}

// printDrift prints the drift phase's table, halt codes and the variants
// that did not behave.
func printDrift(w io.Writer, d *driftResults) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "\n### UI drift (%d variants of the mock app)\n\n", d.Variants)
	fmt.Fprintln(w, "| kind | variants | behaved | silent wrong |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	bw, sw := 0, 0
	for _, o := range d.Results {
		if o.Verdict == "silent_wrong" {
			if o.Kind == "benign" {
				bw++
			} else {
				sw++
			}
		}
	}
	fmt.Fprintf(w, "| benign (must succeed, right outputs) | %d | %d succeeded | %d |\n", d.Benign, d.BenignSuccess, bw)
	fmt.Fprintf(w, "| semantic (must halt, right code) | %d | %d halted (%d with another code) | %d |\n", d.Semantic, d.SemanticHalted, d.SemanticHaltedOtherCode, sw)
	codes := make([]string, 0, len(d.Codes))
	for c, n := range d.Codes {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	slices.Sort(codes)
	fmt.Fprintf(w, "\nsilent wrong results: **%d**; decoy hits: %d; halt codes: %s\n", d.SilentWrong, d.DecoyHits, strings.Join(codes, ", "))
	if len(d.Problems) > 0 {
		fmt.Fprintln(w, "\nvariants that did not behave:")
		fmt.Fprintln(w)
		for _, o := range d.Problems {
			fmt.Fprintf(w, "- **%s** %s: expected %s; got %s %s %s (outputs %v, decoy hits %d)\n",
				o.Verdict, o.Variant, o.Expected, o.Status, o.FailureCode, oneLine(o.Message), o.Outputs, o.DecoyHits)
			if o.Detail != "" {
				fmt.Fprintf(w, "  - change: %s\n", o.Detail)
			}
			for _, page := range []string{"member", "search", "nav", "root"} {
				if notes := o.Layout[page]; len(notes) > 0 {
					fmt.Fprintf(w, "  - %s page: %s\n", page, strings.Join(notes, "; "))
				}
			}
		}
	}
}

func fmtMS(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.4f", v)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}
