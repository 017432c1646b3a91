// Package anthropic is the Model adapter for Anthropic's Messages API,
// through the official anthropic-sdk-go SDK.
//
// Each Decide sends the system instruction and one user message (the
// screenshot as an image block when present, then goal, context,
// observation and corrective as text) with a single tool, "act", whose
// input_schema is the request's contract, and a tool_choice that forces
// it. The tool_use block's input is the turn.
//
// Keys come from the environment through [FromEnv]; nothing is read from
// the environment behind the caller's back (the SDK's ANTHROPIC_* defaults,
// profiles and OpenTelemetry spans are turned off).
package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/cuahq/cua/internal/model"
)

// Defaults applied by [New] to a zero [Config] field.
const (
	DefaultBaseURL    = "https://api.anthropic.com"
	DefaultModel      = string(sdk.ModelClaudeSonnet5_5)
	DefaultMaxRetries = 2
	DefaultTimeout    = 2 * time.Minute
	DefaultMaxTokens  = 4096
)

// Environment variables read by [FromEnv].
const (
	EnvBaseURL         = model.EnvBaseURL
	EnvModel           = model.EnvModel
	EnvAPIKey          = model.EnvAPIKey
	EnvAnthropicAPIKey = "ANTHROPIC_API_KEY"
)

// ToolName is the one tool the model is made to call.
const ToolName = "act"

// Config configures a [Model]: BaseURL ends before "/v1/messages", the key
// is sent as the API wants it, and the defaults are this package's.
type Config = model.Conn

// Model answers requests through the Messages API. It is safe for
// concurrent use.
type Model struct {
	cfg    Config
	client sdk.Client
}

var _ model.Model = (*Model)(nil)

// hosted is what this adapter shares with the other hosted one.
var hosted = model.Hosted{Provider: "anthropic", KeyVar: EnvAnthropicAPIKey, DefaultBaseURL: DefaultBaseURL,
	DefaultModel: DefaultModel, DefaultMaxRetries: DefaultMaxRetries, DefaultTimeout: DefaultTimeout}

// FromEnv builds a Config from the environment: the model is modelFlag,
// else CUA_LLM_MODEL, else DefaultModel; the base URL is baseURLFlag, else
// CUA_LLM_BASE_URL, else DefaultBaseURL; the key is CUA_LLM_API_KEY, else
// ANTHROPIC_API_KEY. Without a key it returns an error wrapping
// [model.ErrNoKey] that names ANTHROPIC_API_KEY (or CUA_LLM_API_KEY).
func FromEnv(getenv func(string) string, modelFlag, baseURLFlag string) (Config, error) {
	return hosted.FromEnv(getenv, modelFlag, baseURLFlag)
}

// New returns a Model for cfg. It returns an error wrapping
// [model.ErrNoKey] when cfg has no key, and an error when the base URL is
// not an absolute http(s) URL.
func New(cfg Config) (*Model, error) {
	cfg, err := hosted.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	client := sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")+"/"),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
	)
	return &Model{cfg: cfg, client: client}, nil
}

// ID returns "anthropic:" and the configured model id.
func (m *Model) ID() string { return "anthropic:" + m.cfg.Model }

// RequiresFrame reports false: the observation alone is enough.
func (m *Model) RequiresFrame() bool { return false }

// Decide sends req and returns the input of the model's "act" tool call as
// the turn; when the model answered in text instead, the text, raw. It
// returns an error wrapping [model.ErrUnavailable] when the endpoint cannot
// be reached, keeps failing after the retries, answers with a body that is
// not a message, or does not answer within the timeout; ctx's own error
// when ctx ends; and a plain error for any other refusal (400, 401, …) or
// a contract that is not a JSON object schema.
func (m *Model) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	schema, err := inputSchema(req.Contract)
	if err != nil {
		return model.Response{}, err
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(m.cfg.Model),
		MaxTokens: int64(m.cfg.MaxTokens),
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(userBlocks(req)...)},
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{
			Name:        ToolName,
			Description: sdk.String("Take your next turn. The input must satisfy the schema."),
			InputSchema: schema,
		}}},
		ToolChoice: sdk.ToolChoiceParamOfTool(ToolName),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}

	callCtx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	var httpResp *http.Response
	msg, err := m.client.Messages.New(callCtx, params, option.WithResponseInto(&httpResp))
	if err != nil {
		status := 0
		if httpResp != nil {
			status = httpResp.StatusCode
		}
		return model.Response{}, m.classify(ctx, callCtx, status, err, httpResp)
	}
	if msg == nil {
		return model.Response{}, fmt.Errorf("anthropic: %w: empty answer", model.ErrUnavailable)
	}

	var turn json.RawMessage
	var text strings.Builder
	for _, block := range msg.Content {
		switch block.Type {
		case "tool_use":
			if block.Name == ToolName && turn == nil {
				turn = block.Input
			}
		case "text":
			text.WriteString(block.Text)
		}
	}
	if turn == nil {
		turn = model.TurnFromText(text.String())
	}
	id := string(msg.Model)
	if id == "" {
		id = m.cfg.Model
	}
	u := msg.Usage
	return model.Response{
		Turn: turn,
		Usage: model.Usage{
			// Cached prompt tokens are prompt tokens too.
			InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			OutputTokens: int(u.OutputTokens),
		},
		Model: id,
	}, nil
}

func userBlocks(req model.Request) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	if len(req.Screenshot) > 0 {
		blocks = append(blocks, sdk.NewImageBlockBase64("image/png", base64.StdEncoding.EncodeToString(req.Screenshot)))
	}
	return append(blocks, sdk.NewTextBlock(model.UserPrompt(req)))
}

// inputSchema turns the contract into the tool's input_schema, keeping
// every keyword: "properties" and "required" in their fields, the rest
// ("additionalProperties", "$defs", …) as extra fields. A tool's input is
// an object, so a contract of another type is refused.
func inputSchema(contract json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(contract) == 0 {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(contract))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return s, errors.New("anthropic: the contract is not a JSON Schema object")
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return s, fmt.Errorf("anthropic: the contract's type is %v; a tool input must be an object", t)
	}
	extra := map[string]any{}
	for k, v := range obj {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			req, ok := stringList(v)
			if !ok {
				extra[k] = v
				continue
			}
			s.Required = req
		default:
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		s.ExtraFields = extra
	}
	return s, nil
}

func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// classify turns a failed call into the port's errors. parent is the
// caller's context, callCtx the one bounded by the timeout.
func (m *Model) classify(parent, callCtx context.Context, status int, err error, resp *http.Response) error {
	return hosted.Failure(parent, callCtx, m.cfg.Timeout, m.cfg.MaxRetries, status, err, errorMessage(err, resp))
}

// errorMessage returns the provider's error message: the SDK's parsed
// one, else the one in the error body.
func errorMessage(err error, resp *http.Response) string {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return model.Clip(apiErr.Message)
	}
	return model.ErrorBodyMessage(resp)
}
