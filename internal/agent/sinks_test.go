package agent_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/surface/sim"
)

// TestStepsJSONLRedactsModelText: the model's own words (a turn's reason)
// quote a transformed piece of a secret it typed (16 characters, upper
// case); steps.jsonl, which stores every turn, must not hold it. Mutation
// killed: evidence.Bundle.AppendLine writing the line without the
// redactor (steps.jsonl is its only caller here), and fragment matching
// off in the redactor.
func TestStepsJSONLRedactsModelText(t *testing.T) {
	t.Parallel()
	canary := "pw-" + canaryCore + "-Zk81"
	piece := strings.ToUpper(canary[3:19])
	b := setup(t,
		reply(typeText(2, "op-17", "operator_id")),
		reply(typeSecret(3, "operator_password")),
		reply(clickExpecting(4, "Welcome")),
		reply(finish(1, "Signed in; the page showed "+piece)),
		reply(audit("confirmed", "the Welcome heading is shown")),
	)
	cfg := b.config(sim.New(echoApp()), "Sign on as operator op-17")
	cfg.Secrets = secrets{"operator_password": canary}
	cfg.SecretNames = []string{"operator_password"}
	cfg.DataDir = t.TempDir()
	res := b.run(t, cfg)
	if res.Status != agent.StatusFinished {
		t.Fatalf("Status = %s (%q), want finished", res.Status, res.Reason)
	}
	steps, ok := evidenceFiles(t, cfg.DataDir)["runs/"+runID+"/steps.jsonl"]
	if !ok || !bytes.Contains(steps, []byte("Signed in; the page showed")) {
		t.Fatalf("steps.jsonl lacks the finishing turn:\n%s", steps)
	}
	if bytes.Contains(bytes.ToLower(steps), []byte(strings.ToLower(piece))) {
		t.Errorf("steps.jsonl holds a piece of the secret:\n%s", steps)
	}
}
