// Package exec is the Model adapter for an external program: a scripted
// explorer, a wrapper around a model this module has no adapter for, or a
// person answering at a prompt.
//
// The protocol is one process per Decide. The program reads one
// [model.Request] as JSON on stdin (the screenshot, when present, is
// base64 in "screenshot") and writes its answer on stdout, either a bare
// turn object:
//
//	{"action":"click","element":3,"reason":"…"}
//
// or an envelope, the JSON form of [model.Response]:
//
//	{"turn":{"action":"click",…},"usage":{"input_tokens":812,"output_tokens":40},"model":"my-bot-1"}
//
// An object with a "turn" key is read as the envelope. Output that is not
// JSON is returned raw as the turn, for the caller's validation to refuse.
// The program must exit 0; anything it writes on stderr is kept (the tail)
// for the error when it does not.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/model"
)

// Defaults of a [Model].
const (
	DefaultTimeout = 2 * time.Minute
	// MaxOutput bounds what a program may write on stdout.
	MaxOutput = 8 << 20
	// stderrTail is how much of stderr an error quotes.
	stderrTail = 2048
	// waitDelay is how long Decide waits for the program's pipes to close
	// after it was killed (a grandchild may still hold them).
	waitDelay = 2 * time.Second
)

// Model runs a program once per Decide. Set its exported fields before the
// first Decide; it is then safe for concurrent use (each call is its own
// process).
type Model struct {
	command string
	args    []string

	// Timeout bounds one Decide; zero means DefaultTimeout. The program is
	// killed when it runs out.
	Timeout time.Duration
	// Dir is the program's working directory; empty means this process's.
	Dir string
	// Env, when not nil, is the program's whole environment, used as is.
	// When nil the program gets only the allowlist: BaseEnv and the
	// variables named in PassEnv, with this process's values. It never
	// gets this process's whole environment, and never a CUA_SECRET_*.
	Env []string
	// PassEnv names more variables the program may see (New fills it
	// from CUA_EXEC_ENV=NAME,NAME).
	PassEnv []string
}

// BaseEnv are the variables every program gets (when set here).
var BaseEnv = []string{"PATH", "HOME", "TMPDIR", "LANG"}

// PassEnvVar names the variable listing, comma-separated, the extra
// variables an exec model may see.
const PassEnvVar = "CUA_EXEC_ENV"

// secretPrefix marks variables no program ever gets, even when listed.
const secretPrefix = "CUA_SECRET_"

// ParsePassEnv splits a CUA_EXEC_ENV value ("NAME,NAME") into names,
// dropping blanks.
func ParsePassEnv(v string) []string {
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// AllowedEnv builds a program's environment from getenv: BaseEnv plus
// pass, each only when set, and never a name starting with CUA_SECRET_.
func AllowedEnv(getenv func(string) (string, bool), pass []string) []string {
	env := []string{}
	seen := map[string]bool{}
	for _, name := range append(append([]string(nil), BaseEnv...), pass...) {
		if seen[name] || strings.HasPrefix(strings.ToUpper(name), secretPrefix) || strings.ContainsAny(name, "=\x00") {
			continue
		}
		seen[name] = true
		if v, ok := getenv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

var _ model.Model = (*Model)(nil)

// New returns a Model running command with args. The command is looked up
// in PATH when it has no path separator, at each Decide.
// PassEnv is read from CUA_EXEC_ENV.
func New(command string, args ...string) *Model {
	return &Model{command: command, args: append([]string(nil), args...), PassEnv: ParsePassEnv(os.Getenv(PassEnvVar))}
}

// ID returns "exec:" and the command.
func (m *Model) ID() string { return "exec:" + m.command }

// RequiresFrame reports false: the program gets the screenshot when there
// is one, and must cope without.
func (m *Model) RequiresFrame() bool { return false }

// Decide runs the program with req on stdin and returns its answer. It
// returns an error wrapping [model.ErrUnavailable] when the program cannot
// be started, exits non-zero, or outlives the timeout (then also wrapping
// [context.DeadlineExceeded]); ctx's own error when ctx ends; and a plain
// error when it prints nothing or more than MaxOutput.
func (m *Model) Decide(ctx context.Context, req model.Request) (model.Response, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return model.Response{}, fmt.Errorf("exec %s: encode request: %w", m.command, err)
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := osexec.CommandContext(runCtx, m.command, m.args...)
	cmd.Dir = m.Dir
	cmd.Env = m.Env
	if cmd.Env == nil {
		cmd.Env = AllowedEnv(os.LookupEnv, m.PassEnv)
	}
	cmd.Stdin = bytes.NewReader(in)
	stdout := &capped{max: MaxOutput}
	stderr := &tail{max: stderrTail}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay

	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return model.Response{}, fmt.Errorf("exec %s: %w", m.command, ctx.Err())
	case runCtx.Err() != nil:
		return model.Response{}, fmt.Errorf("exec %s: %w: no answer within %s: %w%s",
			m.command, model.ErrUnavailable, timeout, context.DeadlineExceeded, stderr.quote())
	case runErr != nil:
		var exit *osexec.ExitError
		if errors.As(runErr, &exit) {
			return model.Response{}, fmt.Errorf("exec %s: %w: %s%s", m.command, model.ErrUnavailable, exit.ProcessState, stderr.quote())
		}
		if errors.Is(runErr, osexec.ErrWaitDelay) {
			// The program exited 0 but something it started kept stdout
			// open; its answer is complete.
			break
		}
		return model.Response{}, fmt.Errorf("exec %s: %w: %v%s", m.command, model.ErrUnavailable, runErr, stderr.quote())
	}
	if stdout.over {
		return model.Response{}, fmt.Errorf("exec %s: the answer is longer than %d bytes", m.command, MaxOutput)
	}
	return m.parse(stdout.buf.Bytes())
}

// parse reads an envelope, a bare turn, or raw text.
func (m *Model) parse(out []byte) (model.Response, error) {
	text := strings.TrimSpace(string(out))
	if text == "" {
		return model.Response{}, fmt.Errorf("exec %s: the program printed no answer", m.command)
	}
	resp := model.Response{Model: m.ID()}
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &fields) == nil {
		if _, ok := fields["turn"]; ok {
			var env model.Response
			if err := json.Unmarshal([]byte(text), &env); err != nil {
				return model.Response{}, fmt.Errorf("exec %s: malformed envelope: %w", m.command, err)
			}
			if env.Model != "" {
				resp.Model = env.Model
			}
			resp.Turn, resp.Usage = env.Turn, env.Usage
			return resp, nil
		}
		resp.Turn = json.RawMessage(text)
		return resp, nil
	}
	resp.Turn = model.TurnFromText(text)
	return resp, nil
}

// capped keeps the first max bytes written and notes any overflow.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// tail keeps the last max bytes written.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// quote renders the tail for an error message, or nothing when empty.
func (t *tail) quote() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "?"))
	if s == "" {
		return ""
	}
	if t.cut {
		s = "…" + s
	}
	return "; stderr: " + s
}
