package catalog

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// TestWriteDetailApprovalState: `catalog show` says which approvals are
// expired or revoked, and calls only a usable one active.
func TestWriteDetailApprovalState(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	d := &Detail{
		Version: store.Version{CapabilityID: "memberdesk.transfer_funds", Version: "1.0.0", ContentHash: "sha256:ab"},
		Approvals: []store.Approval{
			{ID: "a-expired", Approver: "ops", CreatedAt: now.Add(-48 * time.Hour), ExpiresAt: now.Add(-time.Hour)},
			{ID: "a-revoked", Approver: "ops", CreatedAt: now.Add(-48 * time.Hour), RevokedAt: now.Add(-2 * time.Hour)},
			{ID: "a-active", Approver: "ops", CreatedAt: now.Add(-48 * time.Hour), ExpiresAt: now.Add(time.Hour)},
		},
	}
	var b bytes.Buffer
	if err := WriteDetail(&b, d); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[0], "a-") {
			lines[f[0]] = f[1]
		}
	}
	for id, want := range map[string]string{"a-expired": "expired", "a-revoked": "revoked", "a-active": "active"} {
		if lines[id] != want {
			t.Errorf("approval %s shown as %q, want %q:\n%s", id, lines[id], want, b.String())
		}
	}
}
