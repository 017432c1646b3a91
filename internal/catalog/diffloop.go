package catalog

// diffLoop compares the for_each of two versions of a loop step at path
// ("steps[tick_each]"): the list it walks and its element name as fields,
// its inner steps as a keyed list of their own
// ("steps[tick_each].for_each.steps[tick].target"), so a change inside a
// loop reads like a change of a top-level step, and a riskier inner step
// is marked as risk up. A step that became or stopped being a loop shows
// its for_each added or removed whole.
func diffLoop(path string, a, b any) []Change {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		out := diffValue(path+".for_each", a, b, false)
		for i := range out {
			out[i].RiskUp = out[i].RiskUp || (bok && loopRisky(bm))
		}
		return out
	}
	var out []Change
	for _, k := range []string{"input", "as"} {
		out = append(out, diffValue(path+".for_each."+k, am[k], bm[k], false)...)
	}
	return append(out, diffList(path+".for_each.steps", "id", list(am["steps"]), list(bm["steps"]))...)
}

// loopRisky reports whether a for_each holds a step above safe risk.
func loopRisky(fe map[string]any) bool {
	for _, s := range list(fe["steps"]) {
		if riskRank(s["risk"]) > 0 {
			return true
		}
	}
	return false
}

// addedRisky reports whether an added step (or the loop it is) is above
// safe risk.
func addedRisky(e map[string]any) bool {
	if fe, ok := e["for_each"].(map[string]any); ok && loopRisky(fe) {
		return true
	}
	return riskRank(e["risk"]) > 0
}
