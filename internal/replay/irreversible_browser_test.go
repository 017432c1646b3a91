package replay_test

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// TestIrreversibleStepIsPicturedBeforeAndAfter: an approved transfer on
// real Chromium and MemberDesk. Its irreversible submit is pictured on the
// screen it was authorized on (screenshots/step-NNN-before.png, named by
// its action_dispatched as screenshot_before) and after: the confirm
// dialog it opens cannot be painted, so the first screen painted after it
// is written as step-NNN-after.png, named by a screenshot_after event of
// the submit. The confirm's own screen after is its step_finished's. Every
// picture is a masked PNG the manifest covers, and the log validates.
func TestIrreversibleStepIsPicturedBeforeAndAfter(t *testing.T) {
	w := newWarmWorld(t)
	l, err := capability.Load(filepath.Join(examplesDir, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := replay.Run(t.Context(), replay.Options{
		Capability: l, Library: w.lib, BaseURL: w.app.URL(), Surface: w.sess, Secrets: memberDeskSecrets{}, Redactor: redact.New(),
		Inputs:  map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "250.00"},
		DataDir: w.dir, RunID: "transfer", AllowIrreversible: true, ReleasedGates: []string{"submit"},
		Approval: &policy.Approval{Capability: l.Capability.Ref(), ContentHash: l.Hash, Approver: "reviewer"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("transfer %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	}
	dir := filepath.Join(w.dir, "runs", "transfer")
	validateEventLog(t, dir)
	var before, after, confirmAfter string
	for _, e := range readEvents(t, dir) {
		switch {
		case e.Type == "action_dispatched" && e.StepID == "submit":
			before, _ = e.Data["screenshot_before"].(string)
		case e.Type == "screenshot_after" && e.StepID == "submit":
			after, _ = e.Data["screenshot"].(string)
		case e.Type == "step_finished" && e.StepID == "confirm":
			confirmAfter, _ = e.Data["screenshot"].(string)
		}
	}
	m := regexp.MustCompile(`^screenshots/step-([0-9]{3})-before\.png$`).FindStringSubmatch(before)
	if m == nil || after != fmt.Sprintf("screenshots/step-%s-after.png", m[1]) || confirmAfter == "" {
		t.Fatalf("submit pictured before %q, after %q; confirm after %q: want step-NNN-before.png and step-NNN-after.png of one step", before, after, confirmAfter)
	}
	if rep := evidence.Verify(dir, []string{"OP1001", "teller-pass-1"}); !rep.ShareReady {
		t.Fatalf("bundle not share_ready: %v", rep.Reasons)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, evidence.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	pics := map[string][]byte{}
	for _, rel := range []string{before, after, confirmAfter} {
		raw, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil || img.Bounds().Dx() < 100 {
			t.Fatalf("%s: %v", rel, err)
		}
		if !bytes.Contains(manifest, []byte(`"`+rel+`"`)) {
			t.Errorf("the manifest does not cover %s", rel)
		}
		pics[rel] = raw
	}
	if bytes.Equal(pics[before], pics[after]) {
		t.Errorf("the screens before and after the submit are the same picture")
	}
}
