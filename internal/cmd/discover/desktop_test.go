package discovercmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/pipeline"
)

var updateCassette = flag.Bool("update", false, "rewrite testdata/fixture_greet.cassette.json from the scripted model")

// fixtureGoal is the goal of the desktop discovery; a cassette replays
// only the goal it was recorded with.
const fixtureGoal = "Greet Ada with the colour Blue in the fixture and read the greeting"

// fixtureCassette is the checked-in recording of the scripted model's
// exploration of the GTK fixture.
const fixtureCassette = "testdata/fixture_greet.cassette.json"

// fixtureLaunch is the --launch command of the GTK fixture app of the
// desktop surface's tests.
func fixtureLaunch(tb testing.TB) string {
	tb.Helper()
	script, err := filepath.Abs("../../surface/desktop/testdata/fixture.py")
	if err != nil {
		tb.Fatal(err)
	}
	return "/usr/bin/python3 " + script + " {url}"
}

// scriptedTurn is one answer of the scripted model: the element is found
// in the observation by role and name, never by number.
type scriptedTurn struct {
	role, name string
	turn       map[string]any
}

// fixtureScript is how a person would explain the fixture's greeting to a
// model: type the name, pick the colour, press Greet, read the status.
var fixtureScript = []scriptedTurn{
	{"textbox", "Name", map[string]any{"action": "type", "text": "Ada", "input": "who", "thought": "Type the name from the goal.",
		"expect": map[string]any{"kind": "value_is", "text": "Ada"}}},
	{"combobox", "Color", map[string]any{"action": "select", "text": "Blue", "input": "color", "thought": "Pick the colour from the goal."}},
	{"button", "Greet", map[string]any{"action": "click", "thought": "Greet.", "expect": map[string]any{"kind": "text_appears", "text": "Hello"}}},
	{"status", "", map[string]any{"action": "extract", "into": "greeting", "thought": "Read the greeting."}},
	{"status", "", map[string]any{"action": "finish", "claim": "The status bar shows the greeting for Ada in Blue.", "thought": "The greeting is read."}},
}

// fakeOpenAI is a real HTTP server speaking OpenAI's chat completions wire
// format that answers the agent's decide calls from script, locating each
// turn's element in the observation it is sent, and confirms the audit.
func fakeOpenAI(t *testing.T, script []scriptedTurn) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	next := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Messages) < 2 {
			http.Error(w, "want POST /v1/chat/completions", http.StatusBadRequest)
			return
		}
		user := string(body.Messages[len(body.Messages)-1].Content)
		var turn map[string]any
		if strings.Contains(string(body.ResponseFormat), "verdict") {
			turn = map[string]any{"verdict": "confirmed", "reason": "the status bar shows the greeting"}
		} else {
			mu.Lock()
			if next >= len(script) {
				mu.Unlock()
				http.Error(w, "script exhausted", http.StatusBadRequest)
				return
			}
			st := script[next]
			next++
			mu.Unlock()
			turn = completeTurn(st, user)
		}
		text, _ := json.Marshal(turn)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-fixture", "object": "chat.completion", "created": 1700000000, "model": "scripted-fixture-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": string(text), "refusal": nil}}},
			"usage": map[string]any{"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// completeTurn fills every contract field the script leaves out with null
// and points element at the observation's node of st's role and name.
func completeTurn(st scriptedTurn, user string) map[string]any {
	turn := map[string]any{"action": nil, "claim": nil, "code": nil, "element": nil, "expect": nil, "input": nil, "into": nil,
		"key": nil, "reason": nil, "secret": nil, "text": nil, "thought": nil, "url": nil}
	for k, v := range st.turn {
		turn[k] = v
	}
	// The user message is a JSON string (or parts); its observation
	// lines read [N] role "name".
	var text string
	if json.Unmarshal([]byte(user), &text) != nil {
		text = user
	}
	pat := `\[(\d+)\] ` + regexp.QuoteMeta(st.role)
	if st.name != "" {
		pat += ` "` + regexp.QuoteMeta(st.name) + `"`
	}
	if m := regexp.MustCompile(pat).FindStringSubmatch(text); m != nil {
		var n int
		fmt.Sscan(m[1], &n)
		turn["element"] = n
	}
	return turn
}

// discoverDesktop runs cua discover on the GTK fixture with args added and
// returns its JSON result.
func discoverDesktop(t *testing.T, env map[string]string, args ...string) *pipeline.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // Xvfb, AT-SPI and two sessions of the app on a loaded machine; only a hang meets it
	defer cancel()
	f, out, errOut := cmdutil.TestFactory(env)
	cmd := NewCmdDiscover(f, nil)
	cmd.SetArgs(append([]string{"--surface", "desktop", "--launch", fixtureLaunch(t), "--target", "http://fixture",
		"--goal", fixtureGoal, "--id", "fixture.greet_discovered", "--version", "1.0.0", "--out", filepath.Join(t.TempDir(), "caps"),
		"--data-dir", t.TempDir(), "--json"}, args...))
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("discover: %v\n%s\n%s", err, out, errOut)
	}
	var res pipeline.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	return &res
}

// checkGreetCapability checks that a discovery of the fixture compiled a
// desktop capability whose eval replay greeted Ada in Blue.
func checkGreetCapability(t *testing.T, res *pipeline.Result) {
	t.Helper()
	if res.File == "" || res.Eval == nil || res.Eval.Status != domain.StatusSuccess {
		t.Fatalf("discovery %+v wrote %q, eval %+v", res.Discovery, res.File, res.Eval)
	}
	if got := res.Eval.Outputs["greeting"]; got != "Hello, Ada (Blue)" {
		t.Errorf("eval greeting = %v, want Hello, Ada (Blue)", got)
	}
	data, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"surface: desktop", "name: Greet", "$input: who", "allowed_domains:"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the capability lacks %q:\n%s", want, data)
		}
	}
}

// TestDiscoverDesktopRecordsAndReplaysACassette: cua discover --surface
// desktop explores the GTK fixture in a private Xvfb and AT-SPI session
// with a scripted model behind a real OpenAI-format HTTP endpoint,
// recording a cassette; a second discover replays that cassette with no
// network and no key, and both compile a capability whose eval replay on
// the fixture greets Ada in Blue.
func TestDiscoverDesktopRecordsAndReplaysACassette(t *testing.T) {
	srv := fakeOpenAI(t, fixtureScript)
	cassette := filepath.Join(t.TempDir(), "fixture.cassette.json")
	live := discoverDesktop(t, map[string]string{"OPENAI_API_KEY": "sk-fixture-fake"},
		"--model", "openai:scripted-fixture-model", "--llm-base-url", srv.URL+"/v1", "--record", cassette)
	checkGreetCapability(t, live)
	replayed := discoverDesktop(t, nil, "--cassette", cassette)
	checkGreetCapability(t, replayed)
	if replayed.ContentHash == "" {
		t.Error("the replayed discovery sealed nothing")
	}
	if *updateCassette {
		data, err := os.ReadFile(cassette)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixtureCassette, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiscoverDesktopFromCheckedInCassette replays the checked-in
// cassette: no model, no key, and the compiled capability replays on the
// fixture.
func TestDiscoverDesktopFromCheckedInCassette(t *testing.T) {
	checkGreetCapability(t, discoverDesktop(t, nil, "--cassette", fixtureCassette))
}
