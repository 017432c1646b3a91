package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
)

// verdict is what makes "wrong" mean wrong: another member's balance, a
// business outcome where an answer was due (and the reverse), or a wrong
// outcome code; a failure is not an answer at all.
func TestVerdict(t *testing.T) {
	t.Parallel()
	jane := map[string]any{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}
	carl := map[string]any{"savings_balance": "12345678.90", "status": "Active", "as_of": "2026-11-30"}
	tests := []struct {
		name    string
		member  string
		status  domain.RunStatus
		outcome string
		outputs map[string]any
		want    string // prefix of the verdict; "" is right
	}{
		{"right answer", "12345", domain.StatusSuccess, "", jane, ""},
		{"another member's balance", "56789", domain.StatusSuccess, "", jane, "wrong: member 56789"},
		{"right outcome", "34567", domain.StatusBusinessOutcome, "no_savings_account", nil, ""},
		{"answer where an outcome is due", "99999", domain.StatusSuccess, "", carl, "wrong: member 99999"},
		{"wrong outcome", "45678", domain.StatusBusinessOutcome, "member_not_found", nil, "wrong: member 45678 ended member_not_found"},
		{"outcome where an answer is due", "12345", domain.StatusBusinessOutcome, "member_not_found", nil, "wrong:"},
		{"failure is no answer", "12345", domain.StatusFailed, "", nil, "FAILED"},
		{"unknown member", "00000", domain.StatusSuccess, "", jane, "no known answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := verdict(tt.member, tt.status, tt.outcome, "", tt.outputs)
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("verdict = %q, want prefix %q", got, tt.want)
			}
		})
	}
}

// The batch phase's input file is read by cua batch as rows 1..n whose
// member is memberOf(row-1), which is how results are judged.
func TestLookupCSVRows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lookups.csv")
	if err := writeLookupCSV(path, 20); err != nil {
		t.Fatal(err)
	}
	rows, err := jobs.ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20 {
		t.Fatalf("%d rows, want 20", len(rows))
	}
	for _, r := range rows {
		if got := r.Inputs["member_id"]; got != memberOf(r.N-1) {
			t.Errorf("row %d: member %q, want %q", r.N, got, memberOf(r.N-1))
		}
		if _, ok := known[r.Inputs["member_id"]]; !ok {
			t.Errorf("row %d: member %s has no known answer", r.N, r.Inputs["member_id"])
		}
	}
}

func TestCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"1,2,4,8", []int{1, 2, 4, 8}, false},
		{" 4 ", []int{4}, false},
		{"0", nil, true},
		{"65", nil, true},
		{"2,x", nil, true},
	}
	for _, tt := range tests {
		got, err := counts("-batch-sessions", tt.in)
		if (err != nil) != tt.wantErr || !tt.wantErr && !slices.Equal(got, tt.want) {
			t.Errorf("counts(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "-batch-sessions") {
			t.Errorf("counts(%q) error %q does not name the flag", tt.in, err)
		}
	}
}

// Fewer sessions run proportionally fewer rows, never under 25 nor over
// the configured count; 4 sessions and more run them all (the goal's 200).
func TestBatchRowsAt(t *testing.T) {
	t.Parallel()
	tests := []struct{ rows, n, want int }{
		{200, 1, 50}, {200, 2, 100}, {200, 4, 200}, {200, 8, 200}, {40, 1, 25}, {10, 1, 10},
	}
	for _, tt := range tests {
		if got := batchRowsAt(tt.rows, tt.n); got != tt.want {
			t.Errorf("batchRowsAt(%d, %d) = %d, want %d", tt.rows, tt.n, got, tt.want)
		}
	}
}

// A run counts as reentered only when its event log holds a reentered
// event; a declined reentry or a missing log does not.
func TestReentered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, log string
		want      bool
	}{
		{"reentered", `{"type":"run_started"}` + "\n" + `{"type":"reentered","data":{"step":"open_search"}}` + "\n", true},
		{"declined", `{"type":"reentry_declined"}` + "\n" + `{"type":"action_dispatched"}` + "\n", false},
		{"missing", "", false},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name+".jsonl")
		if tt.log != "" {
			if err := os.WriteFile(path, []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := reentered(path); got != tt.want {
			t.Errorf("%s: reentered = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBusyWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		load string
		cpus int
		warn bool
	}{
		{"0.61 2.45 7.09", 2, false},
		{"2.00 1.00 1.00", 2, false},
		{"13.04 9.54 6.90", 2, true},
		{"3.10 0.50 0.20", 4, false},
		{"", 2, false},
		{"high 1 1", 2, false},
	} {
		got := busyWarning(tc.load, tc.cpus)
		if (got != "") != tc.warn {
			t.Errorf("busyWarning(%q, %d) = %q; want a warning: %v", tc.load, tc.cpus, got, tc.warn)
		}
		if tc.warn && !strings.Contains(got, strings.Fields(tc.load)[0]) {
			t.Errorf("busyWarning(%q, %d) = %q; want it to name the load", tc.load, tc.cpus, got)
		}
	}
}
