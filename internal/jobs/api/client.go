package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/jobs"
)

// Client calls the warm engine's routes of a running `cua serve` (see
// [Handler.Engine]) as one principal, the holder of Token.
type Client struct {
	// URL is the engine's base URL (http://127.0.0.1:8810).
	URL string
	// Token is the bearer token: a principal's own, or the serve token.
	Token string
	// HTTP is the client to use; nil is one that gives up connecting
	// after 5 s and waits for a run as long as it lasts.
	HTTP *http.Client
}

// Error is an answer other than 2xx: its status and the field the API
// named.
type Error struct {
	Status  int
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// ErrUnreachable wraps a failure to reach the engine at all.
var ErrUnreachable = errors.New("engine unreachable")

// maxAnswer bounds an answer read from the engine.
const maxAnswer = 32 << 20

// Capability asks what the engine's catalog holds under ref.
func (c *Client) Capability(ctx context.Context, ref string) (*CapabilityInfo, error) {
	var info CapabilityInfo
	err := c.do(ctx, http.MethodGet, "/v1/capabilities/"+url.PathEscape(ref), nil, &info)
	return &info, err
}

// SensitiveInput is a sensitive input given as a value: refused before
// the value is sent; the engine takes it only as a secret reference.
type SensitiveInput struct{ Name string }

func (e *SensitiveInput) Error() string {
	return fmt.Sprintf("sensitive: to an engine it is given only as a secret reference, %s='%sREF' "+
		"(the engine resolves CUA_SECRET_<REF>); nothing was sent", e.Name, jobs.SecretPrefix)
}

// SplitSecrets moves the inputs given as "$secret:REF" into a's secret
// references.
func SplitSecrets(a *jobs.RunArgs) {
	for k, v := range a.Inputs {
		if ref, ok := strings.CutPrefix(v, jobs.SecretPrefix); ok {
			if a.InputSecrets == nil {
				a.InputSecrets = map[string]string{}
			}
			a.InputSecrets[k] = ref
			delete(a.Inputs, k)
		}
	}
}

// CheckURL accepts an engine's http(s) URL; plain http only to loopback,
// where the token does not cross a network.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%q: want the http(s) URL of a running cua serve", s)
	}
	if ip := net.ParseIP(u.Hostname()); u.Scheme == "http" && u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s: plain http only to a loopback engine; a remote cua serve is https (--tls-cert)", s)
	}
	return nil
}

// Run hands a to the engine as cua replay --engine does: it asks what the
// engine holds under a.Ref (hash, when set, is the content it must hold),
// refuses a sensitive input given as a value before any value is sent,
// then runs it pinned to that content and waits. Errors say what was
// refused: the token, the capability, the input, the run.
func (c *Client) Run(ctx context.Context, a jobs.RunArgs, hash string) (*ReplayResult, error) {
	info, err := c.Capability(ctx, a.Ref)
	if err != nil {
		return nil, explain(err, a.Ref)
	}
	if hash != "" && info.ContentHash != hash {
		return nil, fmt.Errorf("capability %s: the engine holds %s, the file is %s (cua catalog add the file there)", a.Ref, info.ContentHash, hash)
	}
	for _, in := range info.Inputs {
		if _, ok := a.Inputs[in.Name]; ok && in.Sensitive {
			return nil, &SensitiveInput{Name: in.Name}
		}
	}
	a.Ref, a.ContentHash = info.Ref, info.ContentHash
	res, err := c.Replay(ctx, a)
	if err != nil {
		return nil, explain(err, a.Ref)
	}
	return res, nil
}

// explain names what a refusal is about.
func explain(err error, ref string) error {
	var ae *Error
	switch {
	case errors.Is(err, ErrUnreachable):
		return fmt.Errorf("%w (is cua serve running there?)", err)
	case !errors.As(err, &ae):
		return err
	case ae.Status == http.StatusUnauthorized:
		return fmt.Errorf("refused the token (a principal's token in CUA_PRINCIPAL_TOKEN, else <data-dir>/serve.token): %w", err)
	case ae.Status == http.StatusNotFound:
		return fmt.Errorf("capability %s: the engine does not have it (cua catalog add FILE there, or an older cua serve): %w", ref, err)
	}
	return fmt.Errorf("the run of %s was refused: %w", ref, err)
}

// Replay submits a and waits for its job to end.
func (c *Client) Replay(ctx context.Context, a jobs.RunArgs) (*ReplayResult, error) {
	var res ReplayResult
	err := c.do(ctx, http.MethodPost, "/v1/replay", a, &res)
	return &res, err
}

func (c *Client) do(ctx context.Context, method, path string, body, into any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %w", ErrUnreachable, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error, Field string }
		_ = json.Unmarshal(raw, &e)
		return &Error{Status: resp.StatusCode, Field: e.Field, Message: e.Error}
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("the engine's answer to %s %s: %w", method, path, err)
	}
	return nil
}

var defaultClient = &http.Client{Transport: &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	TLSHandshakeTimeout: 5 * time.Second,
	ForceAttemptHTTP2:   true,
}}

// ServeTokenIn reads the serve token a cua serve on dataDir wrote
// (<dataDir>/serve.token); the error names the file.
func ServeTokenIn(dataDir string) (string, error) {
	path := dataDir + "/serve.token"
	raw, err := fsx.ReadFile(path, fsx.MaxToken)
	tok, _, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	if err != nil || tok == "" {
		return "", fmt.Errorf("no token: set CUA_PRINCIPAL_TOKEN to a principal's token (cua users add) or the engine's serve token (%s holds none)", path)
	}
	return tok, nil
}
