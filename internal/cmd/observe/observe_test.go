package observecmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/observer"
)

// TestObserveFlags checks parsing and the RUN/--all rule apart from
// serving.
func TestObserveFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *observeOptions)
	}{
		{name: "all on the default loopback address", args: []string{"--all"}, check: func(t *testing.T, o *observeOptions) {
			if !o.All || o.Plan.Mode != observer.ModeLoopback || o.Plan.Addr != "127.0.0.1:8813" || o.Plan.Safe {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "one run", args: []string{"r1", "--safe"}, check: func(t *testing.T, o *observeOptions) {
			if o.Run != "r1" || o.All || !o.Plan.Safe {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "exposed", args: []string{"--all", "--expose", "--public-url", "https://runs.example.test", "--edge-auth"}, check: func(t *testing.T, o *observeOptions) {
			if o.Plan.Mode != observer.ModeExposed || o.Plan.Origin != "https://runs.example.test" {
				t.Errorf("plan %+v", o.Plan)
			}
		}},
		{name: "no RUN means the whole library", args: nil, check: func(t *testing.T, o *observeOptions) {
			if !o.All || o.Run != "" {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "both RUN and --all", args: []string{"r1", "--all"}, wantErr: "give one RUN"},
		{name: "two runs", args: []string{"r1", "r2"}, wantErr: "accepts at most 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, out, errOut := cmdutil.TestFactory(nil)
			var got *observeOptions
			cmd := NewCmdObserve(f, func(_ context.Context, o *observeOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(out)
			cmd.SetErr(errOut)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || got != nil {
					t.Fatalf("err %v (ran %v), want %q", err, got != nil, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

// TestRefusedExposureExits2BeforeBinding: each refused combination exits
// 2 and prints its own code. --addr names a port this test already holds,
// so a command that bound first would fail with "address in use" instead.
func TestRefusedExposureExits2BeforeBinding(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	addr := held.Addr().String()
	const pub = "https://runs.example.test"
	tests := []struct {
		args []string
		code string
	}{
		{[]string{"--expose"}, observer.CodeExposeRequiresOrigin},
		{[]string{"--expose", "--safe"}, observer.CodeExposeRequiresOrigin},
		{[]string{"--expose", "--public-url", pub}, observer.CodeExposeRequiresEdgeOrSafe},
		{[]string{"--public-url", pub}, observer.CodePublicURLRequiresExpose},
		{[]string{"--edge-auth"}, observer.CodeEdgeAuthRequiresPublicURL},
		{[]string{"--expose", "--edge-auth"}, observer.CodeEdgeAuthRequiresPublicURL},
		{[]string{"--expose", "--public-url", "http://runs.example.test", "--edge-auth"}, observer.CodePublicURLInvalid},
		{[]string{"--addr", "0.0.0.0:8813"}, observer.CodeAddrNotLoopback},
		{[]string{"--addr", "nowhere"}, observer.CodeAddrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.code+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			f, _, errOut := cmdutil.TestFactory(map[string]string{"CUA_DATA_DIR": t.TempDir()})
			args := append([]string{"--all", "--addr", addr}, tt.args...)
			cmd := NewCmdObserve(f, nil)
			cmd.SetArgs(args)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(t.Context())
			var ee *cmdutil.ExitError
			if !errors.As(err, &ee) || ee.Code != ExitRefused {
				t.Fatalf("err %v, want exit %d", err, ExitRefused)
			}
			if !strings.Contains(errOut.String(), tt.code+":") {
				t.Fatalf("stderr %q lacks %s", errOut, tt.code)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestObserveServesUntilCancelled runs the real command on a free port
// over an empty library: it prints its URL, answers the index and a 404,
// and returns when its context ends.
func TestObserveServesUntilCancelled(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "runs", "r1"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut := &syncBuffer{}, &syncBuffer{}
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Getenv: func(k string) string { return map[string]string{"CUA_DATA_DIR": data}[k] }}
	ctx, cancel := context.WithCancel(t.Context())
	cmd := NewCmdObserve(f, nil)
	cmd.SetArgs([]string{"--all", "--addr", "127.0.0.1:0"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var url string
	// Passing, the loop ends at the printed URL; 60 s only catches a
	// command that never serves, with room for a loaded CI machine.
	for deadline := time.Now().Add(60 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s := out.String(); strings.Contains(s, " at http://") {
			url = strings.TrimSpace(s[strings.Index(s, " at ")+4 : strings.IndexByte(s, '\n')])
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("no URL printed; stdout %q stderr %q", out.String(), errOut.String())
	}
	for path, want := range map[string]int{"/": http.StatusOK, "/runs/r1": http.StatusOK, "/runs/r2": http.StatusNotFound} {
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("observe returned %v", err)
		}
	case <-time.After(60 * time.Second): // only a command that ignores ctx waits this long
		t.Fatal("observe did not stop when its context ended")
	}
}
