// Package openai is the Model adapter for any OpenAI-compatible Chat
// Completions endpoint (api.openai.com, Azure-style gateways, vLLM,
// llama.cpp, Ollama, LM Studio …), through the official openai-go SDK.
//
// Each Decide sends one system message and one user message (goal, context,
// observation, corrective; the screenshot as an image part when present)
// and asks for structured output: response_format json_schema, strict, with
// the request's contract. The first choice's content is the turn.
//
// Keys come from the environment through [FromEnv]; nothing is read from
// the environment behind the caller's back (the SDK's OPENAI_* defaults are
// not applied).
package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuahq/cua/internal/model"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Defaults applied by [New] to a zero [Config] field.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultModel      = "gpt-4.1-mini"
	DefaultMaxRetries = 2
	DefaultTimeout    = 2 * time.Minute
)

// Environment variables read by [FromEnv].
const (
	EnvBaseURL      = model.EnvBaseURL
	EnvModel        = model.EnvModel
	EnvAPIKey       = model.EnvAPIKey
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// Config configures a [Model]: BaseURL ends before "/chat/completions", the key
// is sent as the API wants it, and the defaults are this package's.
type Config = model.Conn

// Model answers requests through Chat Completions. It is safe for
// concurrent use.
type Model struct {
	cfg  Config
	chat oai.ChatCompletionService
	// jsonObject is set once the endpoint refused response_format
	// json_schema; later calls go straight to json_object.
	jsonObject atomic.Bool
}

var _ model.Model = (*Model)(nil)

// hosted is what this adapter shares with the other hosted one.
var hosted = model.Hosted{Provider: "openai", KeyVar: EnvOpenAIAPIKey, DefaultBaseURL: DefaultBaseURL,
	DefaultModel: DefaultModel, DefaultMaxRetries: DefaultMaxRetries, DefaultTimeout: DefaultTimeout}

// FromEnv builds a Config from the environment: the model is modelFlag,
// else CUA_LLM_MODEL, else DefaultModel; the base URL is baseURLFlag, else
// CUA_LLM_BASE_URL, else DefaultBaseURL; the key is CUA_LLM_API_KEY, else
// OPENAI_API_KEY. Without a key it returns an error wrapping
// [model.ErrNoKey] that names OPENAI_API_KEY (or CUA_LLM_API_KEY).
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
	// The service is built from explicit options only: openai.NewClient
	// would also apply OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_CUSTOM_HEADERS
	// and the like from the process environment.
	chat := oai.NewChatCompletionService(
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")+"/"),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
	)
	return &Model{cfg: cfg, chat: chat}, nil
}

// ID returns "openai:" and the configured model id.
func (m *Model) ID() string { return "openai:" + m.cfg.Model }

// RequiresFrame reports false: the observation alone is enough.
func (m *Model) RequiresFrame() bool { return false }

type format int

const (
	formatSchema format = iota // response_format json_schema, strict
	formatObject               // response_format json_object, contract in the prompt
)

// Decide sends req and returns the first choice's content as the turn,
// raw when it is not JSON. It returns an error wrapping
// [model.ErrUnavailable] when the endpoint cannot be reached, keeps
// failing after the retries, answers with a body that is not a chat
// completion, or does not answer within the timeout; ctx's own error when
// ctx ends; and a plain error for any other refusal (400, 401, …).
func (m *Model) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	if len(req.Contract) > 0 && !json.Valid(req.Contract) {
		return model.Response{}, errors.New("openai: the contract is not valid JSON")
	}
	callCtx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()

	f := formatSchema
	if m.jsonObject.Load() || len(req.Contract) == 0 {
		f = formatObject
	}
	comp, status, err := m.call(callCtx, req, f)
	if f == formatSchema && refusesSchema(status, err) {
		// Many OpenAI-compatible servers (older vLLM, llama.cpp, LM Studio,
		// some gateways) and some models answer 400 (or 422) to
		// response_format json_schema, or to a contract outside the strict
		// subset. Fall back
		// to json_object, which they accept, with the contract in the
		// prompt instead; the caller validates the turn either way. The
		// fallback sticks for the Model's later calls.
		m.jsonObject.Store(true)
		comp, status, err = m.call(callCtx, req, formatObject)
	}
	if err != nil {
		return model.Response{}, m.classify(ctx, callCtx, status, err)
	}
	if len(comp.Choices) == 0 {
		return model.Response{}, fmt.Errorf("openai: %w: the answer has no choices", model.ErrUnavailable)
	}
	msg := comp.Choices[0].Message
	text := msg.Content
	if text == "" {
		text = msg.Refusal
	}
	id := comp.Model
	if id == "" {
		id = m.cfg.Model
	}
	return model.Response{
		Turn: model.TurnFromText(text),
		Usage: model.Usage{
			InputTokens:  int(comp.Usage.PromptTokens),
			OutputTokens: int(comp.Usage.CompletionTokens),
		},
		Model: id,
	}, nil
}

// call makes one SDK call (with its retries) and returns the final HTTP
// status, zero when no response arrived.
func (m *Model) call(ctx context.Context, req model.Request, f format) (*oai.ChatCompletion, int, error) {
	params := oai.ChatCompletionNewParams{
		Model: shared.ChatModel(m.cfg.Model),
		Messages: []oai.ChatCompletionMessageParamUnion{
			oai.SystemMessage(req.System),
			userMessage(req, f),
		},
	}
	switch f {
	case formatSchema:
		params.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:        "turn",
					Description: oai.String("The next turn; it must satisfy this schema."),
					Strict:      oai.Bool(true),
					Schema:      req.Contract,
				},
			},
		}
	case formatObject:
		params.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONObject: &shared.ResponseFormatJSONObjectParam{},
		}
	}
	var httpResp *http.Response
	comp, err := m.chat.New(ctx, params, option.WithResponseInto(&httpResp))
	status := 0
	if httpResp != nil {
		status = httpResp.StatusCode
	}
	if err != nil {
		return nil, status, &callError{err: err, status: status, message: errorMessage(err, httpResp)}
	}
	return comp, status, nil
}

func userMessage(req model.Request, f format) oai.ChatCompletionMessageParamUnion {
	text := model.UserPrompt(req)
	if f == formatObject {
		// json_object mode requires the word "JSON" in the messages, and
		// the model only learns the contract from the prompt.
		text += "\n\nAnswer with one JSON object"
		if len(req.Contract) > 0 {
			text += " that satisfies this JSON Schema:\n" + string(req.Contract)
		}
		text += "\n"
	}
	if len(req.Screenshot) == 0 {
		return oai.UserMessage(text)
	}
	return oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
		oai.TextContentPart(text),
		oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{
			URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(req.Screenshot),
		}),
	})
}

// callError keeps the final status and the provider's message beside the
// SDK error.
type callError struct {
	err     error
	status  int
	message string
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// refusesSchema reports whether a failed call was a 400 (or a 422, as
// FastAPI-based servers send) about response_format or its schema.
func refusesSchema(status int, err error) bool {
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		return false
	}
	var ce *callError
	if !errors.As(err, &ce) {
		return false
	}
	var apiErr *oai.Error
	if errors.As(err, &apiErr) && apiErr.Param == "response_format" {
		return true
	}
	msg := strings.ToLower(ce.message)
	return strings.Contains(msg, "response_format") || strings.Contains(msg, "json_schema") ||
		strings.Contains(msg, "structured output")
}

// classify turns a failed call into the port's errors. parent is the
// caller's context, callCtx the one bounded by the timeout.
func (m *Model) classify(parent, callCtx context.Context, status int, err error) error {
	var ce *callError
	message := ""
	if errors.As(err, &ce) {
		message = ce.message
	}
	return hosted.Failure(parent, callCtx, m.cfg.Timeout, m.cfg.MaxRetries, status, errors.Unwrap(err), message)
}

// errorMessage returns the provider's error message: the SDK's parsed
// one, else the one in the error body.
func errorMessage(err error, resp *http.Response) string {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return model.Clip(apiErr.Message)
	}
	return model.ErrorBodyMessage(resp)
}
