package batchcmd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmd/batch"
	"github.com/cuahq/cua/internal/jobs"
)

// The progress line says when a row waits for the rescue of a stopped
// worker and then gives no ETA the rescue would make a lie of; otherwise
// the ETA is the rate's, and unknown before any row ended.
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pr        jobs.Progress
		want, not []string
	}{
		{name: "waiting_for_rescue", pr: jobs.Progress{Total: 100, Done: 99, Elapsed: 90 * time.Second, Rescue: 1, RescueIn: 110 * time.Second},
			want: []string{"99/100 done 99", "1 waiting for rescue of a stopped worker, up to 1m50s", "ETA after the rescue and its rerun"},
			not:  []string{"ETA 1s", "ETA 0s"}},
		{name: "rows_outlast_the_rescue", pr: jobs.Progress{Total: 100, Done: 10, Elapsed: 100 * time.Second, Rescue: 2, RescueIn: 20 * time.Second},
			want: []string{"2 waiting for rescue of a stopped worker, up to 20s", "ETA 15m0s"}},
		{name: "no_rescue", pr: jobs.Progress{Total: 100, Done: 99, Elapsed: 99 * time.Second},
			want: []string{"99/100 done 99", "1.0/s", "ETA 1s"}, not: []string{"rescue"}},
		{name: "nothing_ended_yet", pr: jobs.Progress{Total: 10, Elapsed: 5 * time.Second},
			want: []string{"0/10", "ETA unknown"}},
		{name: "all_done", pr: jobs.Progress{Total: 4, Done: 4, Elapsed: 4 * time.Second},
			want: []string{"4/4", "ETA 0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, bar := range []bool{false, true} {
				got := batchcmd.Line(tc.pr, bar)
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						t.Errorf("Line(bar=%v) = %q; want %q in it", bar, got, w)
					}
				}
				for _, n := range tc.not {
					if strings.Contains(got, n) {
						t.Errorf("Line(bar=%v) = %q; want no %q", bar, got, n)
					}
				}
			}
		})
	}
}
