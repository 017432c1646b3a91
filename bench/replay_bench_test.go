package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

const examples = "../examples/capabilities"

type secrets map[string]string

func (s secrets) Secret(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

// BenchmarkReplayLookup times a warm replay of the reference lookup: the
// browser is running and the session signed on, so each iteration is the
// lookup itself (entry navigation, open search, type, search, three
// extractions), in-process as `cua replay` runs it. It reports the median
// and p95 per lookup. bench/cmd/benchrun measures the same lookup side by
// side with Playwright and the bare-CDP floor; this one needs only Go.
func BenchmarkReplayLookup(b *testing.B) { benchLookup(b, "") }

// BenchmarkReplayLookupEvidence is BenchmarkReplayLookup writing the full
// bundle each run (events, a masked screenshot per step, record, plan,
// receipt, manifest); against BenchmarkReplayLookup it gives what the
// evidence costs, also per step (ms/step).
func BenchmarkReplayLookupEvidence(b *testing.B) { benchLookup(b, b.TempDir()) }

func benchLookup(b *testing.B, dataDir string) {
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CUA_BROWSER") == "" {
		b.Skip("no Chromium")
	}
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := app.Open(); err != nil {
		b.Fatal(err)
	}
	defer app.Close()
	lib, err := replay.LoadDir(examples)
	if err != nil {
		b.Fatal(err)
	}
	l, err := capability.Load(filepath.Join(examples, "memberdesk.savings_balance.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	br, err := browser.Launch(ctx, browser.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	sess, err := br.NewSession(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	sec := secrets{"corebank_operator": mockapp.DefaultOperator, "corebank_password": mockapp.DefaultPassword}
	run := func(i int) *domain.RunRecord {
		rec, err := replay.Run(ctx, replay.Options{Capability: l, Library: lib, Inputs: map[string]string{"member_id": "12345"},
			BaseURL: app.URL(), Surface: sess, Secrets: sec, Redactor: redact.New(), RunID: fmt.Sprintf("bench-%d", i), DataDir: dataDir})
		if err != nil {
			b.Fatal(err)
		}
		if rec.Status != domain.StatusSuccess {
			b.Fatalf("lookup %d: %s %s %s", i, rec.Status, rec.FailureCode, rec.Message)
		}
		return rec
	}
	run(-1) // sign on, warm caches
	times := make([]time.Duration, 0, b.N)
	steps := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		steps += len(run(i).Steps)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	var total time.Duration
	for _, d := range times {
		total += d
	}
	b.ReportMetric(ms(total)/float64(steps), "ms/step")
	b.ReportMetric(ms(times[len(times)/2]), "ms/median")
	b.ReportMetric(ms(times[(len(times)*95)/100]), "ms/p95")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
