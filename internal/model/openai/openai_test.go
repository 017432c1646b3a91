package openai_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/model/openai"
)

func newModel(tb testing.TB, baseURL string) model.Model {
	tb.Helper()
	m, err := openai.New(openai.Config{BaseURL: baseURL, Model: "gpt-test", APIKey: modeltest.APIKey})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return m
}

func TestConformance(t *testing.T) {
	t.Parallel()
	modeltest.Exercise(t, newModel, modeltest.OpenAIServer)
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	m := newModel(t, "http://127.0.0.1:1/v1")
	if got := m.ID(); got != "openai:gpt-test" {
		t.Errorf("ID() = %q", got)
	}
	if m.RequiresFrame() {
		t.Error("RequiresFrame() = true, want false")
	}
}

func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	srv := modeltest.OpenAIServer(t, modeltest.Reply(modeltest.ValidTurn, model.Usage{}))
	m := newModel(t, srv.BaseURL())
	if _, err := m.Decide(t.Context(), modeltest.NewRequest()); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	body := srv.Requests()[0].JSON(t)
	if body["model"] != "gpt-test" {
		t.Errorf("model = %v", body["model"])
	}
	rf, _ := body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["strict"] != true || js["schema"] == nil {
		t.Errorf("response_format = %v, want json_schema, strict, with the contract", rf)
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %d, want system + user", len(msgs))
	}
	for i, role := range []string{"system", "user"} {
		if m, _ := msgs[i].(map[string]any); m["role"] != role {
			t.Errorf("messages[%d].role = %v, want %s", i, m["role"], role)
		}
	}
}

// An endpoint that refuses response_format json_schema gets json_object,
// with the contract in the prompt, for this call and every later one.
func TestFallbackToJSONObject(t *testing.T) {
	t.Parallel()
	refusal := `{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",` +
		`"type":"invalid_request_error","param":"response_format","code":null}}`
	tests := []struct {
		name string
		stub modeltest.Stub
	}{
		{"param", modeltest.Raw(http.StatusBadRequest, "application/json", refusal)},
		{"message only", modeltest.Fail(http.StatusBadRequest, "json_schema response format is not supported by this server")},
		{"text body", modeltest.Raw(http.StatusBadRequest, "text/plain", "unsupported field: response_format")},
		{"422", modeltest.Raw(http.StatusUnprocessableEntity, "application/json", `{"message":"response_format.json_schema: extra fields not permitted"}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.OpenAIServer(t, tc.stub,
				modeltest.Reply(modeltest.ValidTurn, model.Usage{InputTokens: 5, OutputTokens: 2}),
				modeltest.Reply(modeltest.ValidTurn, model.Usage{InputTokens: 5, OutputTokens: 2}))
			m := newModel(t, srv.BaseURL())
			for range 2 {
				resp, err := m.Decide(t.Context(), modeltest.NewRequest())
				if err != nil {
					t.Fatalf("Decide: %v", err)
				}
				if string(resp.Turn) != modeltest.ValidTurn {
					t.Errorf("Turn = %s", resp.Turn)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("requests = %d, want 3 (refused, fallback, sticky fallback)", len(reqs))
			}
			for i, r := range reqs[1:] {
				body := r.JSON(t)
				rf, _ := body["response_format"].(map[string]any)
				if rf["type"] != "json_object" {
					t.Errorf("request %d response_format = %v, want json_object", i+2, rf)
				}
				if !strings.Contains(string(r.Body), `satisfies this JSON Schema`) ||
					!strings.Contains(string(r.Body), `additionalProperties`) {
					t.Errorf("request %d does not carry the contract in the prompt", i+2)
				}
			}
		})
	}
}

// A 400 about something else is not a reason to fall back.
func TestNoFallbackOnOtherBadRequest(t *testing.T) {
	t.Parallel()
	srv := modeltest.OpenAIServer(t, modeltest.Fail(http.StatusBadRequest, "The model `gpt-test` does not exist"))
	m := newModel(t, srv.BaseURL())
	_, err := m.Decide(t.Context(), modeltest.NewRequest())
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Decide = %v, want the provider's message", err)
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	srv := modeltest.OpenAIServer(t, modeltest.Fail(http.StatusUnauthorized, "Incorrect API key provided"))
	m := newModel(t, srv.BaseURL())
	_, err := m.Decide(t.Context(), modeltest.NewRequest())
	if err == nil || errors.Is(err, model.ErrUnavailable) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Decide = %v, want a 401 error that is not ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), modeltest.APIKey) {
		t.Errorf("the error names the key: %v", err)
	}
}

func TestFencedTurn(t *testing.T) {
	t.Parallel()
	srv := modeltest.OpenAIServer(t, modeltest.Reply("```json\n"+modeltest.ValidTurn+"\n```", model.Usage{}))
	m := newModel(t, srv.BaseURL())
	resp, err := m.Decide(t.Context(), modeltest.NewRequest())
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if string(resp.Turn) != modeltest.ValidTurn {
		t.Errorf("Turn = %s, want the fenced JSON", resp.Turn)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr string
		noKey   bool
	}{
		{"no key", openai.Config{}, "set OPENAI_API_KEY (or CUA_LLM_API_KEY, which every provider reads)", true},
		{"relative URL", openai.Config{APIKey: "k", BaseURL: "localhost:8080/v1"}, "not an absolute http(s) URL", false},
		{"defaults", openai.Config{APIKey: "k"}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := openai.New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if m.ID() != "openai:"+openai.DefaultModel {
					t.Errorf("ID() = %q", m.ID())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New = %v, want %q", err, tc.wantErr)
			}
			if errors.Is(err, model.ErrNoKey) != tc.noKey {
				t.Errorf("errors.Is(err, ErrNoKey) = %v", !tc.noKey)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		modelFlag string
		urlFlag   string
		want      openai.Config
	}{
		{
			name: "CUA key wins over OPENAI key",
			env:  map[string]string{"CUA_LLM_API_KEY": "cua-key", "OPENAI_API_KEY": "openai-key"},
			want: openai.Config{APIKey: "cua-key", Model: openai.DefaultModel, BaseURL: openai.DefaultBaseURL},
		},
		{
			name: "OPENAI key as fallback",
			env:  map[string]string{"OPENAI_API_KEY": "openai-key"},
			want: openai.Config{APIKey: "openai-key", Model: openai.DefaultModel, BaseURL: openai.DefaultBaseURL},
		},
		{
			name: "blank CUA key falls back",
			env:  map[string]string{"CUA_LLM_API_KEY": "  ", "OPENAI_API_KEY": "openai-key\n"},
			want: openai.Config{APIKey: "openai-key", Model: openai.DefaultModel, BaseURL: openai.DefaultBaseURL},
		},
		{
			name: "environment model and URL",
			env:  map[string]string{"CUA_LLM_API_KEY": "k", "CUA_LLM_MODEL": "llama3", "CUA_LLM_BASE_URL": "http://127.0.0.1:11434/v1"},
			want: openai.Config{APIKey: "k", Model: "llama3", BaseURL: "http://127.0.0.1:11434/v1"},
		},
		{
			name:      "flags win over the environment",
			env:       map[string]string{"CUA_LLM_API_KEY": "k", "CUA_LLM_MODEL": "llama3", "CUA_LLM_BASE_URL": "http://127.0.0.1:11434/v1"},
			modelFlag: "gpt-5",
			urlFlag:   "http://127.0.0.1:9/v1",
			want:      openai.Config{APIKey: "k", Model: "gpt-5", BaseURL: "http://127.0.0.1:9/v1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := openai.FromEnv(func(k string) string { return tc.env[k] }, tc.modelFlag, tc.urlFlag)
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
	env := map[string]string{"ANTHROPIC_API_KEY": "a", "CUA_LLM_MODEL": "m"}
	_, err := openai.FromEnv(func(k string) string { return env[k] }, "", "")
	if !errors.Is(err, model.ErrNoKey) {
		t.Fatalf("FromEnv = %v, want ErrNoKey", err)
	}
	if want := "no API key: set OPENAI_API_KEY (or CUA_LLM_API_KEY, which every provider reads)"; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
}
