package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// TerminalApprover asks a person at the terminal, on out, to approve each
// proposal, reading y or yes from in. It returns nil, no approver (the
// autonomy level then holds what needs a consent), unless in is attached
// to a terminal.
func TerminalApprover(in io.Reader, out io.Writer) Approver {
	f, ok := in.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &promptApprover{in: in, out: out}
}

type promptApprover struct {
	in  io.Reader
	out io.Writer
}

// Approve asks once; anything but y or yes (or no answer) refuses.
func (p *promptApprover) Approve(_ context.Context, pr Proposal) (bool, error) {
	fmt.Fprintf(p.out, "approve step %d: %s? [y/N] ", pr.Step, pr)
	var answer string
	if _, err := fmt.Fscanln(p.in, &answer); err != nil {
		return false, nil
	}
	return strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes"), nil
}
