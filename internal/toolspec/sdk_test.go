package toolspec_test

import (
	"encoding/json"
	"reflect"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	openai "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/toolspec"
)

// sameJSON fails unless the request's "tools" equal the exported array.
func sameJSON(t *testing.T, req modeltest.Request, exported []byte) {
	t.Helper()
	var want any
	if err := json.Unmarshal(exported, &want); err != nil {
		t.Fatal(err)
	}
	got := req.JSON(t)["tools"]
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("tools on the wire differ from the export:\n%s", g)
	}
}

// The exported OpenAI tools load into openai-go's own param type and
// reach a Chat Completions endpoint unchanged.
func TestOpenAISDKSendsTheExportIntact(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	exported := tb.export(t, toolspec.FormatOpenAI)
	var tools []openai.ChatCompletionToolUnionParam
	if err := json.Unmarshal(exported, &tools); err != nil {
		t.Fatalf("openai-go does not load the export: %v", err)
	}
	srv := modeltest.OpenAIServer(t, modeltest.Reply("ok", model.Usage{}))
	c := openai.NewClient(ooption.WithBaseURL(srv.BaseURL()), ooption.WithAPIKey("test-key"), ooption.WithMaxRetries(0))
	_, err := c.Chat.Completions.New(tb.ctx, openai.ChatCompletionNewParams{Model: modeltest.FakeModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("look up member 12345")}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, srv.Requests()[0], exported)
}

// The exported Anthropic tools load into anthropic-sdk-go's own param type
// and reach a Messages endpoint unchanged.
func TestAnthropicSDKSendsTheExportIntact(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	exported := tb.export(t, toolspec.FormatAnthropic)
	var tools []anthropic.ToolUnionParam
	if err := json.Unmarshal(exported, &tools); err != nil {
		t.Fatalf("anthropic-sdk-go does not load the export: %v", err)
	}
	srv := modeltest.AnthropicServer(t, modeltest.Reply("ok", model.Usage{}))
	c := anthropic.NewClient(aoption.WithBaseURL(srv.BaseURL()), aoption.WithAPIKey("test-key"), aoption.WithMaxRetries(0))
	_, err := c.Messages.New(tb.ctx, anthropic.MessageNewParams{Model: modeltest.FakeModel, MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("look up member 12345"))}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, srv.Requests()[0], exported)
}
