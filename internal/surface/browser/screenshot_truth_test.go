package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// flipServer serves /flip: a button whose click changes the page, then
// keeps changing it every 50 ms, 40 times, right after the step: the
// heading counts the states, the background is green in even states and
// blue in odd ones, and a red password field jumps between two places.
func flipServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/flip", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Flip</title>
<body style="margin:0;background:#00ff00">
<h1 id="h" style="margin:0;height:40px;font-size:20px">State 0</h1>
<button id="go" style="position:absolute;left:300px;top:10px">Go</button>
<input type="password" id="pin" aria-label="PIN" value="1234" style="position:absolute;left:20px;top:100px;width:120px;height:30px;background:#ff0000;border:0">
<script>
let n = 0;
const flip = () => {
  n++;
  document.getElementById('h').textContent = 'State ' + n;
  document.body.style.background = n % 2 ? '#0000ff' : '#00ff00';
  document.getElementById('pin').style.top = (n % 2 ? 300 : 100) + 'px';
};
document.getElementById('go').addEventListener('click', () => {
  flip();
  let k = 0;
  const t = setInterval(() => { flip(); if (++k >= 40) clearInterval(t); }, 50);
});
</script>
</body>`)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

// TestCaptureShowsTheObservedScreen: on a page that changes right after
// the step, every capture kept the way the runtime keeps one (observe,
// masked screenshot with the snapshot's sensitive boxes, then no change
// since the observation) shows the state that observation described (its
// background colour, from the heading's state number) and the password
// field black where the snapshot put it, never a later state.
func TestCaptureShowsTheObservedScreen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flipServer(t))
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: e.srv.URL + "/flip"}, nil, "")
	snap := e.waitFor(t, "the page", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "button", "Go", "")
		return ok
	})
	goBtn := find(t, snap, "button", "Go", "")
	e.must(t, domain.Action{Type: domain.ActClick}, &goBtn, "")
	var kept, dropped, lastState int
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) && (kept < 3 || lastState < 41) {
		snap, err := e.s.Observe(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		state, pin := flipState(t, snap)
		shot, err := e.s.MaskedScreenshot(e.ctx, []domain.Rect{pin.Bounds})
		if err != nil {
			t.Fatal(err)
		}
		changed, err := e.s.ChangedSince(e.ctx, snap.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if changed {
			dropped++
			continue
		}
		kept++
		lastState = state
		img := decode(t, shot)
		wantBG := [3]uint8{0, 0xff, 0}
		if state%2 == 1 {
			wantBG = [3]uint8{0, 0, 0xff}
		}
		if got := rgbAt(img, 600, 250, 0, 1); got != wantBG {
			t.Errorf("state %d: background %v, want %v: the capture shows another state than the observation", state, got, wantBG)
		}
		b := pin.Bounds
		if got := rgbAt(img, b.X+b.W/2, b.Y+b.H/2, 0, 1); got != [3]uint8{} {
			t.Errorf("state %d: password field at %+v is %v, want black", state, b, got)
		}
		for _, top := range []float64{100, 300} { // nothing red anywhere the field can be
			if got := rgbAt(img, 80, top+15, 0, 1); got == [3]uint8{0xff, 0, 0} {
				t.Errorf("state %d: an unmasked password field at top %v", state, top)
			}
		}
	}
	t.Logf("captures kept %d, dropped as the page changed under them %d; last state kept %d", kept, dropped, lastState)
	if lastState != 41 {
		t.Errorf("last capture kept shows state %d, want the settled state 41", lastState)
	}
}

// flipState reads the state number and the password field of snap.
func flipState(t *testing.T, snap *domain.UiSnapshot) (int, domain.Node) {
	t.Helper()
	var state = -1
	for _, n := range snap.Nodes {
		if n.Role == "heading" && strings.HasPrefix(n.Name, "State ") {
			state, _ = strconv.Atoi(strings.TrimPrefix(n.Name, "State "))
		}
	}
	if state < 0 {
		t.Fatalf("no state heading:\n%s", surfacetest.Dump(snap))
	}
	for _, n := range snap.Nodes {
		if n.States.Password {
			return state, n
		}
	}
	t.Fatalf("no password field:\n%s", surfacetest.Dump(snap))
	return 0, domain.Node{}
}
