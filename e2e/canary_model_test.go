package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/mockapp"
)

// canaryModelScript is an exec: model that keeps, per call N, its input
// (in.N) and its own environment as the kernel holds it (environ.N), then
// answers turn file t.N with "EL" replaced by the number of the first
// element matching grep pattern p.N in its input, or t.last when there is
// no p.N. DIR is replaced by the directory of those files.
const canaryModelScript = `#!/bin/sh
d='DIR'
n=$(cat "$d/count" 2>/dev/null || echo 0)
n=$((n+1))
echo "$n" > "$d/count"
cat > "$d/in.$n"
cat /proc/$$/environ > "$d/environ.$n"
if [ -f "$d/p.$n" ]; then
  e=$(grep -o -f "$d/p.$n" "$d/in.$n" | head -n 1 | sed 's/^\[\([0-9]*\)\].*/\1/')
  sed "s/\"EL\"/${e:-0}/" "$d/t.$n"
else
  cat "$d/t.last"
fi
`

// canaryModelTurns: sign on with both secrets typed by name, then give up
// (by then the page has echoed the password back). Patterns match the
// element list as it appears JSON-escaped in the request.
var canaryModelTurns = map[string]string{
	"p.1":    `\[[0-9]*\] textbox \\"Operator ID`,
	"t.1":    `{"thought":"operator","action":"type","element":"EL","text":null,"secret":"corebank_operator","input":null,"key":null,"url":null,"into":null,"code":null,"claim":null,"reason":null,"expect":{"kind":"none","text":null}}`,
	"p.2":    `\[[0-9]*\] textbox \\"Password`,
	"t.2":    `{"thought":"password","action":"type","element":"EL","text":null,"secret":"corebank_password","input":null,"key":null,"url":null,"into":null,"code":null,"claim":null,"reason":null,"expect":{"kind":"none","text":null}}`,
	"p.3":    `\[[0-9]*\] button \\"Sign on`,
	"t.3":    `{"thought":"submit","action":"click","element":"EL","text":null,"secret":null,"input":null,"key":null,"url":null,"into":null,"code":null,"claim":null,"reason":null,"expect":{"kind":"none","text":null}}`,
	"t.last": `{"thought":"done","action":"give_up","element":null,"text":null,"secret":null,"input":null,"key":null,"url":null,"into":null,"code":null,"claim":null,"reason":"scripted","expect":null}`,
}

// TestCanaryExecModel runs `cua discover` with an exec: model that types
// the canary password by name on a page that then echoes it back
// (truncated, upper-cased, spaced out). Every request the model process
// read on stdin and that process's environment are kept and scanned, with
// stdout, stderr, the data dir, HOME and TMPDIR. The test checks that the
// echo did reach the model's input (redacted), so the input sink is
// exercised. Mutations killed: the observation sent to the model not
// redacted (redact off, fragment matching off), and an exec model started
// with cua's environment while CUA_SECRET_* is still in it.
func TestCanaryExecModel(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{Operator: operator, Password: canaryPassword})
	for _, via := range []string{"env", "file"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			md := t.TempDir()
			script := filepath.Join(md, "model.sh")
			if err := os.WriteFile(script, []byte(strings.ReplaceAll(canaryModelScript, "DIR", md)), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range canaryModelTurns {
				if err := os.WriteFile(filepath.Join(md, name), []byte(body+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			base := hostileProxy(t, b.app.URL(), hostile{echo: true})
			out := t.TempDir()
			c := newCanaryCmd(t, via, func(data string) []string {
				return []string{"discover", "--goal", "Sign on to MemberDesk", "--target", base, "--out", out,
					"--model", "exec:" + script, "--record", filepath.Join(out, "exploration.cassette.json"),
					"--data-dir", data, "--max-steps", "8", "--no-eval", "--json"}
			})
			err := c.cmd.Run()
			t.Logf("discover: exit %v; stdout %d bytes", err, c.out.Len())

			raw, _ := os.ReadFile(filepath.Join(md, "count"))
			calls, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			if calls < 4 {
				t.Fatalf("the model was called %d times, want 4 (operator, password, sign on, give up)\nstdout:\n%s\nstderr:\n%s",
					calls, c.out.String(), c.errb.String())
			}
			echoed := false
			for i := 1; i <= calls; i++ {
				in, err1 := os.ReadFile(filepath.Join(md, "in."+strconv.Itoa(i)))
				env, err2 := os.ReadFile(filepath.Join(md, "environ."+strconv.Itoa(i)))
				if err1 != nil || err2 != nil {
					t.Fatalf("call %d left no input or environment: %v %v", i, err1, err2)
				}
				if !bytes.Contains(env, []byte("PATH=")) {
					t.Errorf("call %d: the model's environment was not read: %q", i, env)
				}
				if l := leaks(in, canaryPassword); len(l) > 0 {
					t.Errorf("request %d to the model holds the canary: %v", i, l)
				}
				if l := leaks(env, canaryPassword); len(l) > 0 || bytes.Contains(env, []byte("CUA_SECRET_")) {
					t.Errorf("the model process's environment (call %d) holds the canary or a CUA_SECRET_ name: %v", i, l)
				}
				if bytes.Contains(in, []byte("Sign-on key mismatch")) {
					echoed = true
				}
			}
			if !echoed {
				t.Errorf("no request to the model shows the page's echo; the input sink was not exercised")
			}
			c.scanAll(t)
			if _, err := os.Stat(filepath.Join(out, "exploration.cassette.json")); err != nil {
				t.Errorf("--record wrote no cassette: %v", err)
			}
			scanTree(t, "--out and the recorded cassette", out, canaryPassword)
		})
	}
}
