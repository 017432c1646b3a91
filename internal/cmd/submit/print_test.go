package submitcmd_test

import (
	"testing"

	submitcmd "github.com/cuahq/cua/internal/cmd/submit"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
)

// TestPrintShowsTheResultAsReplayDoes: submit --wait prints a finished
// job's outputs, failure and run the way cua replay prints a run, one
// fact a line; a queued job is one line.
func TestPrintShowsTheResultAsReplayDoes(t *testing.T) {
	t.Parallel()
	args := jobs.RunArgs{Ref: "memberdesk.savings_balance"}
	tests := []struct {
		name string
		job  jobs.Job
		want string
	}{
		{"success", jobs.Job{ID: 1, State: "completed", Args: args, Result: &jobs.Result{RunID: "j1-a1", Status: domain.StatusSuccess,
			Outputs: map[string]any{"savings_balance": "1234.56", "as_of": "2026-11-30"}, DurationMS: 812}},
			"job 1 completed memberdesk.savings_balance: SUCCESS\n  output       as_of = 2026-11-30\n  output       savings_balance = 1234.56\n" +
				"  duration     812 ms\n  run          j1-a1\n"},
		{"outcome", jobs.Job{ID: 2, State: "completed", Args: args, Result: &jobs.Result{RunID: "j2-a1", Status: domain.StatusBusinessOutcome, Outcome: "member_not_found"}},
			"job 2 completed memberdesk.savings_balance: BUSINESS_OUTCOME\n  outcome      member_not_found\n  duration     0 ms\n  run          j2-a1\n"},
		{"failure", jobs.Job{ID: 3, State: "cancelled", Args: args, Result: &jobs.Result{RunID: "j3-a1", Status: domain.StatusFailed,
			FailureCode: domain.CodeDomainNotAllowed, Message: "origin http://127.0.0.1:9 is not allowed"}},
			"job 3 cancelled memberdesk.savings_balance: FAILED\n  failure      DOMAIN_NOT_ALLOWED: origin http://127.0.0.1:9 is not allowed\n  duration     0 ms\n  run          j3-a1\n"},
		{"queued", jobs.Job{ID: 4, State: "available", Args: args}, "job 4 available memberdesk.savings_balance\n"},
	}
	for _, tt := range tests {
		f, out, _ := cmdutil.TestFactory(nil)
		if err := submitcmd.Print(f.IO, &tt.job); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, out.String(), tt.want)
		}
	}
}
