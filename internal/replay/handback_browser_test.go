package replay_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// armFault arms a MemberDesk fault for count firings (-1: every time).
func armFault(t *testing.T, w *warmWorld, fault string, count int) {
	t.Helper()
	if err := mockapp.NewClient(w.app.URL(), nil).Arm(t.Context(), fault, count, 0); err != nil {
		t.Fatalf("arm %s: %v", fault, err)
	}
}

func appState(t *testing.T, w *warmWorld) mockapp.State {
	t.Helper()
	st, err := mockapp.NewClient(w.app.URL(), nil).State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSessionDropAfterSignOnOnChromium (issue 24): the reference lookup on
// real Chromium and MemberDesk under session_drop_after_signon. The
// sign-on prerequisite's POST lands and the next page finds the session
// gone (the sign-on form again), so the prerequisite fails; its screen is
// handed back and the lookup's session_expired signs on again and reads
// the balance. When every sign-on drops, the run ends RECOVERY_EXHAUSTED
// after session_expired's one attempt: two sign-ons, no loop.
func TestSessionDropAfterSignOnOnChromium(t *testing.T) {
	l, err := capability.Load(filepath.Join(examplesDir, "memberdesk.savings_balance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("drops once", func(t *testing.T) {
		w := newWarmWorld(t)
		armFault(t, w, mockapp.FaultSessionDropAfterSignon, 1)
		rec, _, _ := w.run(t, l, "12345", false)
		if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["savings_balance"]) != "1234.56" || rec.RecoveryAttempts != 1 {
			t.Fatalf("run %s (%s: %s), outputs %v, %d recoveries; want SUCCESS 1234.56 after one recovery",
				rec.Status, rec.FailureCode, rec.Message, rec.Outputs, rec.RecoveryAttempts)
		}
		if st := appState(t, w); st.Posts["/content/signon"] != 2 || st.Sessions != 1 {
			t.Errorf("posts %v, sessions %d; want two sign-ons, one session", st.Posts, st.Sessions)
		}
	})
	t.Run("always drops", func(t *testing.T) {
		w := newWarmWorld(t)
		armFault(t, w, mockapp.FaultSessionDropAfterSignon, -1)
		rec, _, _ := w.run(t, l, "12345", false)
		if rec.Status != domain.StatusNeedsHuman || rec.FailureCode != domain.CodeRecoveryExhausted || len(rec.Outputs) != 0 {
			t.Fatalf("run %s (%s: %s), outputs %v; want NEEDS_HUMAN RECOVERY_EXHAUSTED and nothing read",
				rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
		}
		if st := appState(t, w); st.Posts["/content/signon"] != 2 {
			t.Errorf("posts %v; want two sign-ons (the prerequisite and one session_expired attempt)", st.Posts)
		}
	})
}
