package console

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/surface/sim"
)

// TestAbandonedClaimAndRestart: a run parks in console A; an operator's
// claim that is never renewed lapses back to PAUSED (the queue row open
// again); console A stops while the run still waits, and console B, opened
// on the same database, still lists the session, why it waits and at which
// step.
func TestAbandonedClaimAndRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cua.db")
	db, err := sqlite.Open(t.Context(), path, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: hitlstore.New(db), Redact: func(s string) string { return s },
		HoldTTL: 300 * time.Millisecond, NewID: func() string { return "w-" + randHex(4) }})
	if err != nil {
		t.Fatal(err)
	}
	ps := principalsAt(path, db)
	srvA, err := New(Config{Addr: "127.0.0.1:0", Auth: ps.authenticator(), Broker: br, SweepEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	consoles.Store(srvA, ps)
	if err := srvA.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	run, err := runtime.NewRun(runtime.RunConfig{ID: "r-wait", BaseURL: "http://app.test"})
	if err != nil {
		t.Fatal(err)
	}
	surf := sim.New(sim.NewFlow("http://app.test", sim.Screen{Name: "form", Nodes: []sim.Node{{Role: "heading", Name: "Form"}}}))
	defer surf.Close()
	parked := make(chan error, 1)
	go func() {
		parked <- srvA.Park(t.Context(), runtime.Parked{Run: run, Surface: surf, Holder: run.Holder, Epoch: 1,
			Domains: []string{"app.test"}, Waiting: hitl.Waiting{SessionID: "r-wait", RunID: "r-wait", Capability: "x.y@1.0.0",
				Step: "confirm", FailureCode: domain.CodeUnexpectedState, Summary: "an undeclared dialog is open"}})
	}()
	alice := signIn(t, srvA, "alice")
	rows := waitRows(t, alice, func(ws []hitl.Waiting) bool { return len(ws) == 1 && ws[0].Lease != nil })
	if code, body := alice.post(t, "/api/claim", srvA.URL(), alice.csrf, `{"session":"r-wait"}`); code != 200 {
		t.Fatalf("claim: %d %s", code, body)
	}
	rows = waitRows(t, alice, func(ws []hitl.Waiting) bool {
		return len(ws) == 1 && ws[0].Lease.State == hitl.StatePaused && ws[0].Status == hitl.WaitOpen
	})
	if rows[0].Lease.Epoch != 4 {
		t.Fatalf("after the hold lapsed: %+v, want PAUSED at epoch 4 (escalate, claim, expire)", rows[0].Lease)
	}
	// Console A goes away while the run waits; B restarts on the same file.
	if err := srvA.Close(); err != nil {
		t.Fatal(err)
	}
	srvB, _ := openConsole(t, path)
	bob := signIn(t, srvB, "bob")
	rows = waitRows(t, bob, func(ws []hitl.Waiting) bool { return len(ws) == 1 })
	if w := rows[0]; w.SessionID != "r-wait" || w.Step != "confirm" || w.FailureCode != domain.CodeUnexpectedState ||
		w.Summary != "an undeclared dialog is open" || w.Lease != nil {
		t.Fatalf("restarted console lists %+v", w)
	}
	if page := bob.get(t, "/"); !strings.Contains(page, "console.js") {
		t.Fatal("the restarted console does not serve its page")
	}
	select {
	case err := <-parked:
		t.Fatalf("the parked run ended: %v", err)
	default:
	}
	_ = db.Close()
}

func waitRows(t *testing.T, c *client, ok func([]hitl.Waiting) bool) []hitl.Waiting {
	t.Helper()
	var got struct{ Sessions []hitl.Waiting }
	// A passing wait ends at the first matching list; 60 s only catches a
	// state that never comes, with room for a loaded CI machine.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := json.Unmarshal([]byte(c.get(t, "/api/sessions")), &got); err != nil {
			t.Fatal(err)
		}
		if ok(got.Sessions) {
			return got.Sessions
		}
	}
	t.Fatalf("sessions never became as expected: %+v", got.Sessions)
	return nil
}
