package observer_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/observer"
	"github.com/cuahq/cua/internal/surface/browser"
)

// artifactDir is where browser tests leave their screenshots for review:
// $CUA_TEST_ARTIFACTS/observer when set, else testdata/out (ignored by git).
func artifactDir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join("testdata", "out")
	if d := os.Getenv("CUA_TEST_ARTIFACTS"); d != "" {
		dir = filepath.Join(d, "observer")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// chromium starts one headless Debian Chromium for the test with cua's
// flags, a fresh profile and a per-test TMPDIR.
func chromium(t *testing.T) context.Context {
	t.Helper()
	tmp := t.TempDir()
	profile := filepath.Join(tmp, "profile")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath("/usr/lib/chromium/chromium"), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile), chromedp.NoInheritEnv, chromedp.Env(browser.Env(tmp, profile, false, os.Getenv)...),
		chromedp.Headless, chromedp.WindowSize(1280, 900),
	}
	opts = append(opts, browser.FlagOptions(browser.Flags())...)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Chromium on a loaded CI machine; only a hang meets it
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel(); cancel() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// TestRunLibraryRendersInChromium builds a bundle whose screenshots are
// real Chromium captures of the mock app, serves it, and renders the index
// and the run page in headless Chromium: the stylesheet applies under the
// CSP, the timeline lists every event, every screenshot loads. The pages'
// screenshots are saved under artifactDir.
func TestRunLibraryRendersInChromium(t *testing.T) {
	start := time.Now()
	ctx := chromium(t)
	t.Logf("chromium up in %v", time.Since(start))
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(app.Handler())
	t.Cleanup(ts.Close)
	capture := func(path string) []byte {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+path)); err != nil {
			t.Fatalf("open the mock app: %v", err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("capture the mock app: %v", err)
		}
		return png
	}
	shot1, shot2 := capture("/"), capture("/content/signon")
	t.Logf("mock app captured at %v", time.Since(start))
	data := library(t)
	writeBundle(t, data, bundleSpec{id: "r-browser", capability: "member.lookup@1.2.0", status: domain.StatusSuccess,
		started: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), shots: [][]byte{shot1, shot2},
		receipt: map[string]any{"status": "completed", "effects": []any{}}})
	b := serve(t, data, observer.Exposure{}, "")
	out := artifactDir(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs"))); err != nil {
		t.Fatalf("open the index: %v", err)
	}
	rows := evalInt(t, ctx, `document.querySelectorAll("table.runs tbody tr").length`)
	cssRules := evalInt(t, ctx, `document.styleSheets.length ? document.styleSheets[0].cssRules.length : 0`)
	index := fullShot(t, ctx)
	t.Logf("index rendered at %v", time.Since(start))
	if rows != 5 || cssRules < 10 {
		t.Fatalf("index: %d rows, %d css rules; want 5 rows and the stylesheet applied", rows, cssRules)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(b.url+"/runs/r-browser"), chromedp.WaitVisible(chromedp.CSS("ol.timeline"))); err != nil {
		t.Fatalf("open the run page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.images].every(i => i.complete)`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("screenshots never loaded: %v", err)
	}
	events := evalInt(t, ctx, `document.querySelectorAll("ol.timeline > li").length`)
	imgs := evalInt(t, ctx, `document.images.length`)
	loaded := evalInt(t, ctx, `[...document.images].filter(i => i.naturalWidth > 0).length`)
	t.Logf("run page loaded at %v", time.Since(start))
	runPage := fullShot(t, ctx)
	if events != 6 || imgs != 2 || loaded != 2 {
		t.Fatalf("run page: %d events, %d images, %d loaded; want 6 events and 2 loaded screenshots", events, imgs, loaded)
	}
	for name, raw := range map[string][]byte{"index.png": index, "run-r-browser.png": runPage} {
		if err := os.WriteFile(filepath.Join(out, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots saved under %s", out)
}

func evalInt(t *testing.T, ctx context.Context, expr string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return n
}

func fullShot(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return raw
}
