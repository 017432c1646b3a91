package heal

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteList prints one line per proposal.
func WriteList(w io.Writer, ps []*Proposal) error {
	if len(ps) == 0 {
		_, err := fmt.Fprintln(w, "no heal proposals")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tBASE\tDRAFT\tSTEP\tNAME")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%q\n", p.ID, p.State, p.BaseRef(), p.Version, p.Step, p.Evidence.Candidate.Name)
	}
	return tw.Flush()
}

// WriteDiff prints the semantic diff of a proposal against its base and,
// when a change is refused, that the proposal is quarantined and why.
func WriteDiff(w io.Writer, p *Proposal) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s -> %s (%s)\n", p.BaseRef(), p.Ref(), p.State)
	for _, c := range p.Changes {
		b.WriteString(c.String() + "\n")
	}
	if len(p.Refused) > 0 {
		fmt.Fprintf(&b, "QUARANTINED: %d refused change(s):", len(p.Refused))
		for _, c := range p.Refused {
			fmt.Fprintf(&b, " %s (%s);", c.Path, c.Refused)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteEval prints an evaluation, one line per case.
func WriteEval(w io.Writer, ev *Eval) error {
	if ev == nil {
		_, err := fmt.Fprintln(w, "eval: none yet")
		return err
	}
	verdict := "FAILED"
	if ev.Passed {
		verdict = "PASSED"
	}
	fmt.Fprintf(w, "eval %s by %s at %s\n", verdict, ev.By, ev.At.Format("2006-01-02T15:04:05Z"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range ev.Cases {
		mark := "FAIL"
		if c.Passed {
			mark = "ok"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\twant %s\t%s\trun %s\n", mark, c.Battery, c.Name, c.Want, c.Why, c.RunID)
	}
	return tw.Flush()
}

// WriteProposal prints a proposal: its draft, evidence, diff, eval,
// approval, canary and history.
func WriteProposal(w io.Writer, p *Proposal, history []Transition) error {
	e := p.Evidence
	fmt.Fprintf(w, "proposal %s: %s\n", p.ID, p.State)
	fmt.Fprintf(w, "  base   %s (%s)\n  draft  %s (%s)\n  step   %s\n", p.BaseRef(), p.BaseHash, p.Ref(), p.Hash, p.Step)
	fmt.Fprintf(w, "  halted run %s: %s %s\n  screen before: %s of run %s (%s)\n", e.RunID, e.Code, e.Message, e.Before, e.RunID, e.URL)
	fmt.Fprintf(w, "  candidate %s %s %q in frame %q\n  why: %s\n", e.Candidate.Path, e.Candidate.Role, e.Candidate.Name, e.Candidate.Frame, e.Why)
	for _, c := range e.Considered {
		fmt.Fprintf(w, "    considered %s\n", c)
	}
	if err := WriteDiff(w, p); err != nil {
		return err
	}
	if err := WriteEval(w, p.Eval); err != nil {
		return err
	}
	if a := p.Approval; a != nil {
		fmt.Fprintf(w, "approved by %s at %s: %s -> %s (previous active %s)\n", a.By, a.At.Format("2006-01-02T15:04:05Z"), a.OldHash, a.NewHash, a.Previous)
	}
	if c := p.Canary; c != nil {
		fmt.Fprintf(w, "canary %d of %d run(s) passed", len(c.Done), c.Runs)
		if c.Failed != "" {
			fmt.Fprintf(w, "; reverted by run %s", c.Failed)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "history:")
	for _, t := range history {
		fmt.Fprintf(w, "  %s  %s -> %s  by %s: %s\n", t.At.Format("2006-01-02T15:04:05Z"), orNone(string(t.From)), t.To, t.By, t.Note)
	}
	return nil
}
