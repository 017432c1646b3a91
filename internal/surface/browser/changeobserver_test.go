package browser

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/cdproto/runtime"
)

// TestChangeObserverReportsAtOnce runs the change observer's script in a
// page's main world with a counting binding: a change is reported in the
// task that made it, not at the end of a window (a late report of an
// earlier change arrived after the next snapshot and forced a retake of
// every step's evidence screenshot); a document that keeps changing is
// throttled, and its last change is still reported.
func TestChangeObserverReportsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	e.load(t, "/main.html", "Conformance")
	script := `(async () => {
  let calls = 0;
  globalThis.` + bindingName + ` = () => { calls++; };
  ` + changeObserver + `;
  const tick = () => new Promise(r => setTimeout(r, 0));
  const el = document.createElement('div');
  document.body.appendChild(el);
  await tick();
  const first = calls;
  await new Promise(r => setTimeout(r, 5));
  el.textContent = 'second change, 5 ms later';
  await tick();
  const second = calls;
  for (let i = 0; i < 60; i++) { el.textContent = 'burst ' + i; await null; }
  const burst = calls;
  el.textContent = 'last';
  await new Promise(r => setTimeout(r, 200));
  return {first, second, burst, settled: calls};
})()`
	res, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: script, AwaitPromise: new(true), ReturnByValue: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExceptionDetails != nil {
		t.Fatalf("script threw: %s", res.ExceptionDetails.Text)
	}
	var got struct{ First, Second, Burst, Settled int }
	if err := json.Unmarshal(res.Result.Value, &got); err != nil {
		t.Fatalf("result %s: %v", res.Result.Value, err)
	}
	if got.First != 1 || got.Second != 2 {
		t.Errorf("reports after the first and second change = %d, %d; want 1, 2 (each change reported in its own task)", got.First, got.Second)
	}
	if got.Burst-2 > 40 {
		t.Errorf("a document changing in 60 consecutive tasks was reported %d times; want it throttled", got.Burst-2)
	}
	if got.Settled <= got.Burst {
		t.Errorf("no report after the burst's last change (%d reports before it, %d after): a change went unreported", got.Burst, got.Settled)
	}
}
