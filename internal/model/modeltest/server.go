package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/model"
)

// Stub is one canned answer of a fake server. Build it with [Reply],
// [Fail], [Raw] or [Hang]; the server renders it in its wire format.
type Stub struct {
	// Status is the HTTP status; zero means 200.
	Status int
	// Header holds extra response headers.
	Header http.Header
	// Body, when set, is sent verbatim with ContentType.
	Body        string
	ContentType string
	// Turn is the model's answer in a rendered 200 response: the message
	// content (OpenAI), or the forced tool's input when Turn is a JSON
	// object and a text block otherwise (Anthropic).
	Turn  string
	Usage model.Usage
	// Model is the model id in a rendered response; empty means FakeModel.
	Model string
	// Message is the error message of a rendered error response.
	Message string
	// Hang holds the request until the client gives up.
	Hang bool
	// Repeat serves the stub for every request from here on.
	Repeat bool
}

// FakeModel is the model id a rendered response names unless a stub says
// otherwise.
const FakeModel = "modeltest-model-1"

// Reply is a successful answer carrying turn and usage.
func Reply(turn string, usage model.Usage) Stub {
	return Stub{Status: http.StatusOK, Turn: turn, Usage: usage}
}

// Fail is an error answer in the wire format's error shape. A retryable
// status (408, 409, 429, 5xx) carries "Retry-After-Ms: 1", as the providers
// send it, so SDK retries do not slow the tests down.
func Fail(status int, message string) Stub {
	s := Stub{Status: status, Message: message}
	if retryable(status) {
		s.Header = http.Header{"Retry-After-Ms": {"1"}}
	}
	return s
}

// Raw sends body verbatim with the given status and content type.
func Raw(status int, contentType, body string) Stub {
	return Stub{Status: status, ContentType: contentType, Body: body}
}

// Hang never answers: the request is held until the client gives up or the
// test ends.
func Hang() Stub { return Stub{Hang: true} }

// Always returns s serving every request from here on.
func (s Stub) Always() Stub {
	s.Repeat = true
	return s
}

// WithModel returns s naming id as the answering model.
func (s Stub) WithModel(id string) Stub {
	s.Model = id
	return s
}

func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// Request is one request a fake server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a generic value.
func (r Request) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		tb.Fatalf("modeltest: request body is not a JSON object: %v", err)
	}
	return v
}

// wire renders stubs in one provider's format.
type wire struct {
	name    string
	path    string // the endpoint the fake serves
	baseURL func(serverURL string) string
	success func(s Stub) any
	failure func(s Stub) any
}

// Server is a fake model endpoint on 127.0.0.1 speaking one provider's
// wire format, scripted by a list of stubs served in order. When the test
// ends it fails the test for every stub that was never used; a request
// beyond the script fails the test at once.
type Server struct {
	tb    testing.TB
	wire  wire
	srv   *httptest.Server
	done  chan struct{}
	mu    sync.Mutex
	stubs []Stub
	used  []bool
	next  int
	reqs  []Request
}

// OpenAIServer starts a fake OpenAI Chat Completions endpoint
// (POST /v1/chat/completions). Point an adapter at [Server.BaseURL].
func OpenAIServer(tb testing.TB, stubs ...Stub) *Server {
	tb.Helper()
	return start(tb, openAIWire, stubs)
}

// AnthropicServer starts a fake Anthropic Messages endpoint
// (POST /v1/messages). Point an adapter at [Server.BaseURL].
func AnthropicServer(tb testing.TB, stubs ...Stub) *Server {
	tb.Helper()
	return start(tb, anthropicWire, stubs)
}

func start(tb testing.TB, w wire, stubs []Stub) *Server {
	s := &Server{
		tb:    tb,
		wire:  w,
		done:  make(chan struct{}),
		stubs: stubs,
		used:  make([]bool, len(stubs)),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(func() {
		close(s.done) // release hanging handlers first, or Close waits on them
		s.srv.Close()
		s.Verify()
	})
	return s
}

// BaseURL is the base URL an adapter of this wire format is configured
// with: the server URL plus "/v1" for OpenAI, the server URL for Anthropic.
func (s *Server) BaseURL() string { return s.wire.baseURL(s.srv.URL) }

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Verify fails the test for each stub that was never served. It runs by
// itself when the test ends.
func (s *Server) Verify() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, used := range s.used {
		if !used {
			s.tb.Errorf("modeltest: %s stub %d of %d (status %d) was never used", s.wire.name, i+1, len(s.stubs), status(s.stubs[i]))
		}
	}
}

func status(s Stub) int {
	if s.Status == 0 {
		return http.StatusOK
	}
	return s.Status
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.tb.Errorf("modeltest: read request body: %v", err)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != s.wire.path {
		s.tb.Errorf("modeltest: %s fake got %s %s, want POST %s", s.wire.name, r.Method, r.URL.Path, s.wire.path)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}

	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	n := len(s.reqs)
	if s.next >= len(s.stubs) {
		s.mu.Unlock()
		s.tb.Errorf("modeltest: %s fake got request %d but holds %d stubs", s.wire.name, n, len(s.stubs))
		w.Header().Set("X-Should-Retry", "false")
		http.Error(w, "no stub left", http.StatusTeapot)
		return
	}
	st := s.stubs[s.next]
	s.used[s.next] = true
	if !st.Repeat {
		s.next++
	}
	s.mu.Unlock()

	if st.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	for k, vs := range st.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	code := status(st)
	if st.Body != "" || st.ContentType != "" {
		w.Header().Set("Content-Type", st.ContentType)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, st.Body)
		return
	}
	var v any
	if code == http.StatusOK {
		v = s.wire.success(st)
	} else {
		v = s.wire.failure(st)
	}
	out, err := json.Marshal(v)
	if err != nil {
		s.tb.Errorf("modeltest: render stub: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(code)
	_, _ = w.Write(out)
}

func modelOf(s Stub) string {
	if s.Model == "" {
		return FakeModel
	}
	return s.Model
}

var openAIWire = wire{
	name:    "openai",
	path:    "/v1/chat/completions",
	baseURL: func(u string) string { return u + "/v1" },
	success: func(s Stub) any {
		return map[string]any{
			"id":      "chatcmpl-modeltest",
			"object":  "chat.completion",
			"created": 1700000000,
			"model":   modelOf(s),
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": s.Turn, "refusal": nil},
				"finish_reason": "stop",
				"logprobs":      nil,
			}},
			"usage": map[string]any{
				"prompt_tokens":     s.Usage.InputTokens,
				"completion_tokens": s.Usage.OutputTokens,
				"total_tokens":      s.Usage.Total(),
			},
		}
	},
	failure: func(s Stub) any {
		typ := "invalid_request_error"
		switch {
		case s.Status == http.StatusTooManyRequests:
			typ = "rate_limit_exceeded"
		case s.Status == http.StatusUnauthorized:
			typ = "invalid_api_key"
		case s.Status >= 500:
			typ = "server_error"
		}
		return map[string]any{"error": map[string]any{
			"message": s.Message, "type": typ, "param": nil, "code": nil,
		}}
	},
}

var anthropicWire = wire{
	name:    "anthropic",
	path:    "/v1/messages",
	baseURL: func(u string) string { return u },
	success: func(s Stub) any {
		block := map[string]any{"type": "text", "text": s.Turn}
		stop := "end_turn"
		var obj map[string]any
		if json.Unmarshal([]byte(s.Turn), &obj) == nil {
			block = map[string]any{"type": "tool_use", "id": "toolu_modeltest", "name": "act", "input": json.RawMessage(s.Turn)}
			stop = "tool_use"
		}
		return map[string]any{
			"id":            "msg_modeltest",
			"type":          "message",
			"role":          "assistant",
			"model":         modelOf(s),
			"content":       []any{block},
			"stop_reason":   stop,
			"stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens":  s.Usage.InputTokens,
				"output_tokens": s.Usage.OutputTokens,
			},
		}
	},
	failure: func(s Stub) any {
		typ := "invalid_request_error"
		switch {
		case s.Status == http.StatusTooManyRequests:
			typ = "rate_limit_error"
		case s.Status == http.StatusUnauthorized:
			typ = "authentication_error"
		case s.Status == 529:
			typ = "overloaded_error"
		case s.Status >= 500:
			typ = "api_error"
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": s.Message}}
	},
}

// String names the fake for test output.
func (s *Server) String() string { return fmt.Sprintf("%s fake at %s", s.wire.name, s.srv.URL) }
