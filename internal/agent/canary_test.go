package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/sim"
)

// secrets is a SecretSource over a map.
type secrets map[string]string

func (s secrets) Secret(ref string) (string, error) {
	v, ok := s[ref]
	if !ok {
		return "", fmt.Errorf("no secret %q", ref)
	}
	return v, nil
}

// canaryCore is in every canary: any encoding of a canary (JSON, Go
// quoting, URL or HTML escaping) keeps this run of letters and digits.
const canaryCore = "c4n4ry9f27c1e4b8"

// echoApp is a hostile sign-on: the welcome page shows the password that
// was typed back as visible text.
//
//	login:   [1] heading "Sign on" [2] textbox "Operator" [3] textbox "Password" (password) [4] button "Sign in"
//	welcome: [1] heading "Welcome" [2] text "Signed in with password …" [3] button "Sign out"
func echoApp() *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "login", Title: "Sign on", Nodes: []sim.Node{
			{Role: "heading", Name: "Sign on"},
			{Role: "textbox", Name: "Operator"},
			{Role: "textbox", Name: "Password", Password: true},
			{Role: "button", Name: "Sign in"},
		}},
		sim.Screen{Name: "welcome", Title: "Welcome", Nodes: []sim.Node{
			{Role: "heading", Name: "Welcome"},
			{Role: "text"},
			{Role: "button", Name: "Sign out"},
		}},
	)
	f.On("button", "Sign in", func(ev *sim.Event) error {
		pw := ev.Value("textbox", "Password")
		if err := ev.Goto("welcome"); err != nil {
			return err
		}
		return ev.Set("text", "", "Signed in with password "+pw)
	})
	return f
}

// TestSecretCanary: a secret typed by name reaches the application, which
// echoes it on the next screen, yet it never appears in any request the
// model endpoint received (raw bytes, any encoding), nor in the run's
// evidence, nor in the result and trace.
func TestSecretCanary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		canary string
	}{
		{"Plain", "pw-" + canaryCore},
		{"NeedsEscaping", `P&a"ss <w>` + canaryCore + ` é/?=%`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t,
				reply(typeText(2, "op-17", "operator_id")),
				reply(typeSecret(3, "operator_password")),
				reply(clickExpecting(4, "Welcome")),
				reply(finish(1, "Signed in: the Welcome page is shown")),
				reply(audit("confirmed", "the Welcome heading is shown")),
			)
			f := echoApp()
			cfg := b.config(sim.New(f), "Sign on as operator op-17")
			cfg.Secrets = secrets{"operator_password": tc.canary}
			cfg.SecretNames = []string{"operator_password"}
			cfg.DataDir = t.TempDir()
			res := b.run(t, cfg)

			if res.Status != agent.StatusFinished {
				t.Fatalf("Status = %s (%q), want finished", res.Status, res.Reason)
			}
			// The secret did reach the app, and the app did echo it: the
			// test is not vacuous.
			if i := slices.IndexFunc(f.Handled(), func(h sim.Handled) bool { return h.Name == "Password" }); i < 0 || f.Handled()[i].Text != tc.canary {
				t.Fatalf("the app did not receive the secret: %+v", f.Handled())
			}
			if after := b.userText(t, 3); !strings.Contains(after, "Signed in with password [REDACTED]") {
				t.Errorf("the screen after sign-on does not show the redacted echo:\n%s", after)
			}
			if txt := b.userText(t, 0); !strings.Contains(txt, "Secrets you may type by name: operator_password") {
				t.Errorf("the model is not told the secret's name:\n%s", txt)
			}

			for i, r := range b.srv.Requests() {
				if bytes.Contains(r.Body, []byte(canaryCore)) || bytes.Contains(r.Body, []byte(tc.canary)) {
					t.Errorf("request %d to the model carries the secret", i+1)
				}
			}
			files := evidenceFiles(t, cfg.DataDir)
			for _, name := range []string{"steps.jsonl", "events.jsonl"} {
				if _, ok := files["runs/"+runID+"/"+name]; !ok {
					t.Errorf("evidence has no %s (files: %v)", name, keys(files))
				}
			}
			for name, raw := range files {
				if bytes.Contains(raw, []byte(canaryCore)) {
					t.Errorf("evidence file %s carries the secret", name)
				}
			}
			out, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte(canaryCore)) {
				t.Errorf("the result (trace) carries the secret:\n%s", out)
			}
			typed := res.Trace.Steps[2]
			if typed.Action.Value == nil || typed.Action.Value.Secret != "operator_password" || typed.Literal != "" {
				t.Errorf("the secret step is recorded as %+v / literal %q, want a $secret reference", typed.Action.Value, typed.Literal)
			}
		})
	}
}

// TestSecretReadBack: an extraction of text that shows a typed secret must
// not carry the secret out of the run: the agent should refuse it (the
// runtime's SecretLog exists for this) or at least redact it from the
// result and the trace the recorder compiles.
func TestSecretReadBack(t *testing.T) {
	t.Parallel()
	_ = ("fixed: internal/agent/perform.go:240-274 (loop.extract) keeps the raw text of a node that echoes a " +
		"typed secret: targeting.ExtractText's result goes to l.outputs[into] (Result.Outputs) and " +
		"TraceStep.Extracted, and the node copy in TraceStep.Node.Value holds it too; only the notice is " +
		"redacted. cua discover --json prints the Result, and the recorder compiles the trace. The dispatcher " +
		"is built without runtime.Config.SecretLog (agent.go:179), so the loop cannot tell. Fix: pass a " +
		"*runtime.SecretLog to runtime.New and refuse an extract whose text SecretLog.Reveals (verdict " +
		"\"refused\", notice \"element [N] shows a secret\", l.fail), as replay does; and redact the node " +
		"copies kept in TraceStep.Node with cfg.Redactor.")
	b := setup(t,
		reply(typeSecret(3, "operator_password")),
		reply(click(4)),
		reply(extract(2, "greeting")),
		reply(giveUp("done")),
	)
	f := echoApp()
	cfg := b.config(sim.New(f), "Sign on and read the greeting")
	cfg.Secrets = secrets{"operator_password": "pw-" + canaryCore}
	cfg.SecretNames = []string{"operator_password"}
	res := b.run(t, cfg)

	for i, r := range b.srv.Requests() {
		if bytes.Contains(r.Body, []byte(canaryCore)) {
			t.Errorf("request %d to the model carries the secret", i+1)
		}
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(canaryCore)) {
		t.Errorf("the result carries the secret: outputs %q, trace steps %s", res.Outputs, mustJSON(res.Trace.Steps))
	}
	for _, st := range res.Trace.Steps {
		if st.Action.Type == domain.ActExtract && strings.Contains(st.Extracted, canaryCore) {
			t.Errorf("extract step %d recorded the secret as its value", st.Index)
		}
	}
}

// TestSecretUnknownName: a secret name the source does not know is a
// skipped step with a notice, not a crash, and no secret reaches the model.
func TestSecretUnknownName(t *testing.T) {
	t.Parallel()
	b := setup(t,
		reply(typeSecret(3, "root_password")),
		reply(giveUp("no such secret")),
	)
	f := echoApp()
	cfg := b.config(sim.New(f), "Sign on")
	cfg.Secrets = secrets{"operator_password": "pw-" + canaryCore}
	res := b.run(t, cfg)
	if res.Status != agent.StatusGaveUp {
		t.Errorf("Status = %s (%q), want gave_up", res.Status, res.Reason)
	}
	if v := b.progress.verdicts(); len(v) != 2 || v[0] != "skipped" {
		t.Errorf("verdicts = %q, want the unknown secret skipped", v)
	}
	if got := actedOn(f); len(got) != 0 {
		t.Errorf("the app received %+v", got)
	}
	for i, r := range b.srv.Requests() {
		if bytes.Contains(r.Body, []byte(canaryCore)) {
			t.Errorf("request %d carries a secret", i+1)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(raw)
}
