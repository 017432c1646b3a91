package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// faultGoals judges the fault-model phase against issue 26's targets.
func faultGoals(res *results) []goal {
	f := res.Faults
	if f == nil {
		return nil
	}
	var gs []goal
	for _, a := range f.Arms {
		if a.Arm != armContracts {
			continue
		}
		if a.Total == nil {
			gs = append(gs, goal{"faults: silent wrong effects with contracts", "0 of 80", "not run: " + a.Skipped, false})
			continue
		}
		gs = append(gs, goal{"faults: silent wrong effects with contracts (7 write faults and the control)",
			fmt.Sprintf("0 of %d", a.Total.Runs), fmt.Sprintf("%d of %d (95%% ≤ %.1f%%)%s", a.Total.SilentWrong.K, a.Total.Runs,
				100*a.Total.SilentWrong.Interval.High, screenOnlyBeside(f)), a.Total.SilentWrong.K == 0 && a.Total.Runs > 0})
		for _, r := range a.Rows {
			if r.Fault == controlClass {
				gs = append(gs, goal{"faults: false halts on the no-fault control (contracts)", fmt.Sprintf("≤ 1 in 10 (%d of %d)", r.Runs/10, r.Runs),
					fmt.Sprintf("%d of %d", r.FalseHalt.K, r.Runs), r.Runs > 0 && r.FalseHalt.K*10 <= r.Runs})
			}
		}
	}
	if rb := f.ReadBack; rb != nil {
		per := rb.AddedHistoryVisits
		if rb.ContractsPerRun > 0 {
			per /= float64(rb.ContractsPerRun)
		}
		gs = append(gs, goal{"faults: the read-back's cost per write (no-fault control, medians)", "≤ 1 screen visit",
			fmt.Sprintf("%.1f Transfer History visit(s) (%+.1f page loads), %+.0f ms beside the transfer's %.0f ms", per, rb.AddedScreenVisits,
				rb.AddedMedianMS, rb.ContractsMedianMS), per <= 1})
	}
	return gs
}

// screenOnlyBeside is the screen-only arm's silent wrong count, to print
// beside the contracts arm's.
func screenOnlyBeside(f *faultsResults) string {
	for _, a := range f.Arms {
		if a.Arm == armScreenOnly && a.Total != nil {
			return fmt.Sprintf("; screen-only %d of %d", a.Total.SilentWrong.K, a.Total.Runs)
		}
	}
	return ""
}

// printFaults prints the fault-model tables.
func printFaults(w io.Writer, res *results) {
	f := res.Faults
	if f == nil {
		return
	}
	fmt.Fprintf(w, "\n### Fault model: MemberDesk's write faults, %d runs per class and arm, judged from the ledger\n", f.RunsPerClass)
	pct := func(c faultCount, n int) string {
		return fmt.Sprintf("%d/%d [%.0f–%.0f%%]", c.K, n, 100*c.Interval.Low, 100*c.Interval.High)
	}
	for _, a := range f.Arms {
		if a.Total == nil {
			fmt.Fprintf(w, "\n%s: not run (%s)\n", a.Arm, a.Skipped)
			continue
		}
		fmt.Fprintf(w, "\n%s (%s, %d effect contract(s)); Wilson 95%% intervals:\n\n", a.Arm, a.Capability, a.Contracts)
		fmt.Fprintln(w, "| fault | silent wrong effect | correct halt | false halt | correct success | not fired | how cua ended |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
		for _, r := range append(append([]faultRow(nil), a.Rows...), *a.Total) {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %s |\n", r.Fault, pct(r.SilentWrong, r.Runs), pct(r.CorrectHalt, r.Runs),
				pct(r.FalseHalt, r.Runs), pct(r.CorrectSuccess, r.Runs), r.NotFired, codesString(r.Codes))
		}
		for _, r := range a.Rows {
			for _, s := range r.Samples {
				fmt.Fprintf(w, "- %s %s: %s\n", a.Arm, r.Fault, oneLine(s))
			}
		}
	}
	if rb := f.ReadBack; rb != nil {
		fmt.Fprintf(w, "\nThe read-back on the no-fault control: transfer median %.0f ms with contracts, %.0f ms screen-only (%+.0f ms); %+.1f content page load(s), %+.1f Transfer History load(s) per run, %d contract(s) per transfer\n",
			rb.ContractsMedianMS, rb.ScreenOnlyMedianMS, rb.AddedMedianMS, rb.AddedScreenVisits, rb.AddedHistoryVisits, rb.ContractsPerRun)
	}
}

// codesString prints status and failure-code counts in a stable order.
func codesString(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
