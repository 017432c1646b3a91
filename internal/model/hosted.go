package model

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Hosted describes a hosted provider's adapter (openai, anthropic): its
// name in errors, its own key variable and the defaults [Hosted.Resolve]
// applies. The adapters share this one resolution and one classification
// of failed calls.
type Hosted struct {
	// Provider prefixes every error ("openai").
	Provider string
	// KeyVar is the provider's own key variable ("OPENAI_API_KEY").
	KeyVar            string
	DefaultBaseURL    string
	DefaultModel      string
	DefaultMaxRetries int
	DefaultTimeout    time.Duration
}

// Conn is a hosted adapter's configuration (openai.Config and
// anthropic.Config are this type), before and after [Hosted.Resolve].
type Conn struct {
	// BaseURL is the API root, ending before the provider's endpoint
	// ("/chat/completions", "/v1/messages"); empty means the default.
	BaseURL string
	// Model is the model id sent with each request; empty means the
	// default.
	Model string
	// APIKey authenticates the requests. Required.
	APIKey string
	// HTTPClient makes the requests; nil means a new client with Go's
	// default transport.
	HTTPClient *http.Client
	// MaxRetries is how many times the SDK retries a connection error, 408,
	// 409, 429 or 5xx, with a short exponential backoff (or the server's
	// Retry-After). Zero means the default; negative means never.
	MaxRetries int
	// Timeout bounds one call, retries included; zero means the default.
	Timeout time.Duration
	// MaxTokens caps the answer where the API requires a cap (anthropic);
	// zero means the adapter's default. Others ignore it.
	MaxTokens int
}

// NoKey is the error for a provider without a key: it wraps ErrNoKey and
// names the provider's own variable first, then CUA_LLM_API_KEY.
func NoKey(keyVar string) error {
	return fmt.Errorf("%w: set %s (or %s, which every provider reads)", ErrNoKey, keyVar, EnvAPIKey)
}

// FromEnv builds the provider's configuration from the environment: the
// model is modelFlag, else CUA_LLM_MODEL, else the default; the base URL
// is baseURLFlag, else CUA_LLM_BASE_URL, else the default; the key is
// CUA_LLM_API_KEY, else the provider's own variable. Without a key it
// returns [NoKey]'s error.
func (h Hosted) FromEnv(getenv func(string) string, modelFlag, baseURLFlag string) (Conn, error) {
	set, err := SettingsFromEnv(getenv, h.KeyVar, modelFlag, baseURLFlag, h.DefaultModel, h.DefaultBaseURL)
	if err != nil {
		return Conn{}, err
	}
	return Conn{BaseURL: set.BaseURL, Model: set.Model, APIKey: set.APIKey}, nil
}

// Resolve applies the defaults to c. It returns an error wrapping
// ErrNoKey when c has no key, and an error when the base URL is not an
// absolute http(s) URL.
func (h Hosted) Resolve(c Conn) (Conn, error) {
	if c.APIKey == "" {
		return c, fmt.Errorf("%s: %w", h.Provider, NoKey(h.KeyVar))
	}
	c.BaseURL = FirstNonEmpty(c.BaseURL, h.DefaultBaseURL)
	c.Model = FirstNonEmpty(c.Model, h.DefaultModel)
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("%s: base URL %q is not an absolute http(s) URL", h.Provider, c.BaseURL)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = h.DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = h.DefaultTimeout
	}
	return c, nil
}

// Failure turns a failed call into the port's errors. parent is the
// caller's context, callCtx the one bounded by timeout; status is the
// final HTTP status (zero when no response arrived), cause the transport's
// or SDK's error and message the provider's own message ("" when none).
// A status below 400 is an answer that could not be read.
func (h Hosted) Failure(parent, callCtx context.Context, timeout time.Duration, retries, status int, cause error, message string) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s: %w", h.Provider, parent.Err())
	case callCtx.Err() != nil:
		return fmt.Errorf("%s: %w: no answer within %s: %w", h.Provider, ErrUnavailable, timeout, context.DeadlineExceeded)
	case status == 0:
		return fmt.Errorf("%s: %w: %v", h.Provider, ErrUnavailable, cause)
	case status < 400:
		return fmt.Errorf("%s: %w: malformed answer: %v", h.Provider, ErrUnavailable, cause)
	}
	return HTTPFailure(h.Provider, status, retries, message)
}
