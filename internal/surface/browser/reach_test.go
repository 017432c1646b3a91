package browser

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// reachPage holds controls that a click or a key reaches beyond the node it
// names (issue 22, item 5): a table cell and a group whose centre is an
// irreversible "Transfer now" button (one of them hidden from the
// accessibility tree, so no snapshot shows it), a <label for> of a "Delete
// record" button, a cell whose centre is a harmless "View history" button,
// and a form whose submit button is "Delete record". Every button reports
// to the server by POST /fire?what=...; the server, not the page, says what
// ran.
const reachPage = `<!doctype html><title>Reach</title>
<style>
  td, .box { width: 320px; height: 70px; text-align: center; vertical-align: middle; border: 1px solid #999; }
  .box { display: flex; align-items: center; justify-content: center; margin: 6px 0; }
  button { width: 160px; height: 36px; }
  label { display: inline-block; padding: 8px 20px; border: 1px dashed #999; }
</style>
<h1>Reach</h1>
<script>
  function fire(what) { fetch('/fire?what=' + what, {method: 'POST'}); }
</script>
<table><tbody><tr>
  <td aria-label="Payee Ada"><button onclick="fire('cell')">Transfer now</button></td>
  <td aria-label="Payee Bo"><button onclick="fire('view')">View history</button></td>
</tr></tbody></table>
<div class="box" role="group" aria-label="Quick actions"><button onclick="fire('group')">Transfer now</button></div>
<div class="box" role="group" aria-label="Shortcuts"><button aria-hidden="true" tabindex="-1" onclick="fire('hidden')">Transfer now</button></div>
<p><label for="del">Details</label> <button id="del" onclick="fire('label')">Delete record</button></p>
<h2>Record</h2>
<form onsubmit="event.preventDefault(); fire('form')">
  <input aria-label="Record id" value="42">
  <button>Delete record</button>
</form>
`

// fireServer serves reachPage and counts the POSTs each control sent.
type fireServer struct {
	*httptest.Server
	mu    sync.Mutex
	fired map[string]int
}

func newFireServer(t *testing.T) *fireServer {
	t.Helper()
	fs := &fireServer{fired: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /reach", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, reachPage)
	})
	mux.HandleFunc("POST /fire", func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		fs.fired[r.URL.Query().Get("what")]++
		fs.mu.Unlock()
	})
	fs.Server = httptest.NewServer(mux)
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fireServer) count(what string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.fired[what]
}

// TestRiskOfWhatTheActionReaches: a click or a key is judged by every
// control it really reaches, not only by the node it names. A step declared
// safe that would press an irreversible control through a container, a
// label or a form's Enter is refused POLICY_DENIED naming that control, and
// the control's handler never runs (the server saw no POST). Each case runs
// twice: with the snapshot the action was resolved on (policy sees what the
// snapshot shows) and without it (only the surface, at the moment it acts,
// sees what the page holds: the check that catches a label's target and a
// control the accessibility tree hides). A click declared at the risk it
// has, with the irreversible gate released, still lands.
func TestRiskOfWhatTheActionReaches(t *testing.T) {
	t.Parallel()
	fs := newFireServer(t)
	e := newEnv(t, fs.Server)
	const hash = "sha256:reach"
	tests := []struct {
		name     string
		role     string // the node the step names
		nodeName string
		key      string // press_key instead of a click
		risk     domain.Risk
		allow    bool   // --allow-irreversible with an approval of the content
		what     string // the handler the action reaches
		wantDeny string // the control the refusal names; "" when the action lands
	}{
		{"safe click on a cell around Transfer now", "cell", "Payee Ada", "", domain.RiskSafe, false, "cell", `button "Transfer now"`},
		{"safe click on a group around Transfer now", "group", "Quick actions", "", domain.RiskSafe, false, "group", `button "Transfer now"`},
		{"safe click on a group around a hidden Transfer now", "group", "Shortcuts", "", domain.RiskSafe, false, "hidden", `button "Transfer now"`},
		{"elevated click on a group around Transfer now", "group", "Quick actions", "", domain.RiskElevated, false, "group", `button "Transfer now"`},
		{"safe click on the label of Delete record", "", "Details", "", domain.RiskSafe, false, "label", `button "Delete record"`},
		{"safe Enter in a form that Delete record submits", "textbox", "Record id", "Enter", domain.RiskSafe, false, "form", `button "Delete record"`},
		{"safe click on a cell around View history lands", "cell", "Payee Bo", "", domain.RiskSafe, false, "view", ""},
		{"irreversible click on the group, gate released, lands", "group", "Quick actions", "", domain.RiskIrreversible, true, "group", ""},
		{"irreversible click on the label, gate released, lands", "", "Details", "", domain.RiskIrreversible, true, "label", ""},
	}
	for _, tt := range tests {
		for _, withSnap := range []bool{true, false} {
			name := tt.name + map[bool]string{true: " (policy and surface)", false: " (surface alone)"}[withSnap]
			t.Run(name, func(t *testing.T) {
				eng, err := policy.New(policy.Config{
					Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1"},
					AllowIrreversible: tt.allow, ContentHash: hash,
					Approval: &policy.Approval{Capability: "reach@1.0.0", ContentHash: hash, Approver: "ops"},
				})
				if err != nil {
					t.Fatal(err)
				}
				snap := perception.Normalize(e.load(t, "/reach", "Reach")) // as the runtime does
				n := reachNode(t, snap, tt.role, tt.nodeName)
				before := fs.count(tt.what)
				a := domain.Action{Type: domain.ActClick, StepID: "pay", Risk: tt.risk, Actor: domain.ActorAutomation}
				if tt.key != "" {
					a.Type, a.Key = domain.ActPressKey, tt.key
				}
				req := policy.Request{Action: a, Node: &n}
				if withSnap {
					req.Snapshot = snap
				}
				aa, err := eng.Authorize(req)
				if err == nil {
					_, err = e.s.Dispatch(e.ctx, aa)
				}
				if tt.wantDeny == "" {
					if err != nil {
						t.Fatalf("a %s action declared %s: %v", a.Type, tt.risk, err)
					}
					deadline := time.Now().Add(10 * time.Second)
					for fs.count(tt.what) == before && time.Now().Before(deadline) {
						time.Sleep(20 * time.Millisecond)
					}
					if got := fs.count(tt.what) - before; got != 1 {
						t.Fatalf("the server saw %d POSTs from %q, want 1", got, tt.what)
					}
					return
				}
				if !policy.IsDenied(err) || domain.ErrorCode(err) != domain.CodePolicyDenied {
					t.Fatalf("a %s action declared %s that reaches %s: %v, want POLICY_DENIED", a.Type, tt.risk, tt.wantDeny, err)
				}
				if !withSnap && !aa.Valid() {
					t.Errorf("without a snapshot policy refused up front, so the surface's check went untested: %v", err)
				}
				if !strings.Contains(err.Error(), tt.wantDeny) {
					t.Errorf("the refusal does not name the control %s: %v", tt.wantDeny, err)
				}
				if aa.Valid() && surface.FailureCode(err) != domain.CodePolicyDenied || aa.Valid() && !errors.Is(err, surface.ErrUnauthorized) {
					t.Errorf("the surface's refusal maps to %s (ErrUnauthorized %v), want POLICY_DENIED, nothing sent",
						surface.FailureCode(err), errors.Is(err, surface.ErrUnauthorized))
				}
				time.Sleep(300 * time.Millisecond) // a POST that went out would land by now
				if got := fs.count(tt.what) - before; got != 0 {
					t.Fatalf("refused, yet the server saw %d POSTs from %q: the control was pressed", got, tt.what)
				}
			})
		}
	}
}

// reachNode finds the node a case names; a label's node is its text when
// the accessibility tree shows no label node.
func reachNode(t *testing.T, snap *domain.UiSnapshot, role, name string) domain.Node {
	t.Helper()
	if role != "" {
		return find(t, snap, role, name, "")
	}
	for _, r := range []string{"label", "text"} {
		if n, ok := surfacetest.Find(snap, r, name, ""); ok {
			return n
		}
	}
	t.Fatalf("no label or text %q:\n%s", name, surfacetest.Dump(snap))
	return domain.Node{}
}
