package anthropic_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/anthropic"
	"github.com/cuahq/cua/internal/model/modeltest"
)

func newModel(tb testing.TB, baseURL string) model.Model {
	tb.Helper()
	m, err := anthropic.New(anthropic.Config{BaseURL: baseURL, Model: "claude-test", APIKey: modeltest.APIKey})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return m
}

func TestConformance(t *testing.T) {
	t.Parallel()
	modeltest.Exercise(t, newModel, modeltest.AnthropicServer)
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	m := newModel(t, "http://127.0.0.1:1")
	if got := m.ID(); got != "anthropic:claude-test" {
		t.Errorf("ID() = %q", got)
	}
	if m.RequiresFrame() {
		t.Error("RequiresFrame() = true, want false")
	}
}

// The contract becomes the one tool's input_schema, keyword for keyword,
// and tool_choice forces that tool.
func TestForcedTool(t *testing.T) {
	t.Parallel()
	srv := modeltest.AnthropicServer(t, modeltest.Reply(modeltest.ValidTurn, model.Usage{}))
	m := newModel(t, srv.BaseURL())
	req := modeltest.NewRequest()
	req.Screenshot = modeltest.Screenshot
	if _, err := m.Decide(t.Context(), req); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	body := srv.Requests()[0].JSON(t)
	if body["model"] != "claude-test" || body["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
		t.Errorf("model = %v, max_tokens = %v", body["model"], body["max_tokens"])
	}
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools = %v, want one", body["tools"])
	}
	tool, _ := tools[0].(map[string]any)
	var contract any
	if err := json.Unmarshal(modeltest.Contract, &contract); err != nil {
		t.Fatal(err)
	}
	if tool["name"] != anthropic.ToolName || !reflect.DeepEqual(tool["input_schema"], contract) {
		t.Errorf("tool = %v, want %q with the contract as input_schema", tool, anthropic.ToolName)
	}
	choice, _ := body["tool_choice"].(map[string]any)
	if choice["type"] != "tool" || choice["name"] != anthropic.ToolName {
		t.Errorf("tool_choice = %v, want the act tool forced", choice)
	}
	sys, _ := body["system"].([]any)
	if len(sys) != 1 {
		t.Errorf("system = %v", body["system"])
	}
	msgs, _ := body["messages"].([]any)
	msg, _ := msgs[0].(map[string]any)
	content, _ := msg["content"].([]any)
	if len(msgs) != 1 || msg["role"] != "user" || len(content) != 2 {
		t.Fatalf("messages = %v, want one user message with an image and a text block", msgs)
	}
	if img, _ := content[0].(map[string]any); img["type"] != "image" {
		t.Errorf("first block = %v, want the image", img)
	}
}

func TestContractMustBeAnObject(t *testing.T) {
	t.Parallel()
	m := newModel(t, "http://127.0.0.1:1")
	for _, c := range []string{`{"type":"array"}`, `[1,2]`, `not json`} {
		req := modeltest.NewRequest()
		req.Contract = json.RawMessage(c)
		if _, err := m.Decide(t.Context(), req); err == nil {
			t.Errorf("Decide with contract %s succeeded", c)
		}
	}
}

func TestCachedTokensCount(t *testing.T) {
	t.Parallel()
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[` +
		`{"type":"tool_use","id":"toolu_1","name":"act","input":` + modeltest.ValidTurn + `}],` +
		`"stop_reason":"tool_use","stop_sequence":null,` +
		`"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":7}}`
	srv := modeltest.AnthropicServer(t, modeltest.Raw(http.StatusOK, "application/json", body))
	m := newModel(t, srv.BaseURL())
	resp, err := m.Decide(t.Context(), modeltest.NewRequest())
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if want := (model.Usage{InputTokens: 1110, OutputTokens: 7}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestOverloaded(t *testing.T) {
	t.Parallel()
	srv := modeltest.AnthropicServer(t, modeltest.Fail(529, "Overloaded").Always())
	m := newModel(t, srv.BaseURL())
	_, err := m.Decide(t.Context(), modeltest.NewRequest())
	if !errors.Is(err, model.ErrUnavailable) || !strings.Contains(err.Error(), "Overloaded") {
		t.Fatalf("Decide = %v, want ErrUnavailable with the provider's message", err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		modelFlag string
		urlFlag   string
		want      anthropic.Config
	}{
		{
			name: "CUA key wins over ANTHROPIC key",
			env:  map[string]string{"CUA_LLM_API_KEY": "cua-key", "ANTHROPIC_API_KEY": "ant-key"},
			want: anthropic.Config{APIKey: "cua-key", Model: anthropic.DefaultModel, BaseURL: anthropic.DefaultBaseURL},
		},
		{
			name: "ANTHROPIC key as fallback",
			env:  map[string]string{"ANTHROPIC_API_KEY": "ant-key"},
			want: anthropic.Config{APIKey: "ant-key", Model: anthropic.DefaultModel, BaseURL: anthropic.DefaultBaseURL},
		},
		{
			name:      "flags win over the environment",
			env:       map[string]string{"ANTHROPIC_API_KEY": "k", "CUA_LLM_MODEL": "claude-a", "CUA_LLM_BASE_URL": "http://127.0.0.1:8/"},
			modelFlag: "claude-b",
			urlFlag:   "http://127.0.0.1:9/",
			want:      anthropic.Config{APIKey: "k", Model: "claude-b", BaseURL: "http://127.0.0.1:9/"},
		},
		{
			name: "environment model and URL",
			env:  map[string]string{"ANTHROPIC_API_KEY": "k", "CUA_LLM_MODEL": "claude-a", "CUA_LLM_BASE_URL": "http://127.0.0.1:8/"},
			want: anthropic.Config{APIKey: "k", Model: "claude-a", BaseURL: "http://127.0.0.1:8/"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := anthropic.FromEnv(func(k string) string { return tc.env[k] }, tc.modelFlag, tc.urlFlag)
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if got != tc.want {
				t.Errorf("FromEnv = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFromEnvMissingKey(t *testing.T) {
	t.Parallel()
	// Other providers' keys do not count.
	env := map[string]string{"OPENAI_API_KEY": "o"}
	_, err := anthropic.FromEnv(func(k string) string { return env[k] }, "", "")
	if !errors.Is(err, model.ErrNoKey) {
		t.Fatalf("FromEnv = %v, want ErrNoKey", err)
	}
	if want := "no API key: set ANTHROPIC_API_KEY (or CUA_LLM_API_KEY, which every provider reads)"; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	if _, err := anthropic.New(anthropic.Config{}); !errors.Is(err, model.ErrNoKey) {
		t.Errorf("New without a key = %v, want ErrNoKey", err)
	}
}
