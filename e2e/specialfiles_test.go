package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangGuard bounds a command that should answer at once; it only turns a
// hang into a failure, it is not a speed assertion.
const hangGuard = 60 * time.Second

// runGuarded runs the real binary like runBin, killing it past hangGuard.
func runGuarded(t *testing.T, env []string, args ...string) (binResult, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := binResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return r, false
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r, true
}

// specialFiles makes, in dir, a symlink to /dev/zero and a FIFO named
// after name, and returns /dev/zero and both paths.
func specialFiles(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	link, fifo := filepath.Join(dir, base+"-zero"+ext), filepath.Join(dir, base+"-fifo"+ext)
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"dev zero": "/dev/zero", "symlink to dev zero": link, "fifo": fifo}
}

// TestSpecialFilesRefused: every command that reads a file a user names,
// given /dev/zero, a symlink to it or a FIFO, answers at once with an
// error naming the file, and never fills memory or blocks (invariant 22).
func TestSpecialFilesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	rows := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(rows, []byte("member_id\n12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name string
		args []string
		want string // the stderr (or, for verify, the output) must name it
	}
	var tests []tc
	for kind, p := range specialFiles(t, dir, "inputs.csv") {
		tests = append(tests, tc{"batch --inputs " + kind, []string{"batch", "memberdesk.savings_balance", "--inputs", p, "--sessions", "0"}, p})
	}
	for kind, p := range specialFiles(t, dir, "results.jsonl") {
		if kind == "dev zero" {
			continue // /dev/zero itself is not a results file anyone names
		}
		out := p
		tests = append(tests, tc{"batch --out " + kind, []string{"batch", "memberdesk.savings_balance", "--inputs", rows, "--out", out, "--sessions", "0"}, out})
	}
	pemFile := filepath.Join(dir, "console.pem")
	if err := os.WriteFile(pemFile, []byte("not read past the special file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for kind, p := range specialFiles(t, dir, "console-cert.pem") {
		tests = append(tests, tc{"console --tls-cert " + kind, []string{"console", "--tls-cert", p, "--tls-key", pemFile, "--addr", "127.0.0.1:0"}, p})
	}
	for kind, p := range specialFiles(t, dir, "console-key.pem") {
		tests = append(tests, tc{"console --tls-key " + kind, []string{"console", "--tls-cert", pemFile, "--tls-key", p, "--addr", "127.0.0.1:0"}, p})
	}
	for kind, p := range specialFiles(t, dir, "cassette.json") {
		tests = append(tests, tc{"discover --cassette " + kind, []string{"discover", "--goal", "look up a member",
			"--target", "http://127.0.0.1:9", "--out", filepath.Join(dir, "caps"), "--cassette", p}, p})
	}
	for _, kind := range []string{"events symlink to dev zero", "events fifo", "manifest symlink to dev zero"} {
		bundle := filepath.Join(dir, "bundles", strings.ReplaceAll(kind, " ", "-"))
		if err := os.MkdirAll(bundle, 0o700); err != nil {
			t.Fatal(err)
		}
		name := "events.jsonl"
		if strings.HasPrefix(kind, "manifest") {
			name = "manifest.json"
			if err := os.WriteFile(filepath.Join(bundle, "events.jsonl"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(bundle, name)
		if strings.HasSuffix(kind, "fifo") {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, tc{"verify " + kind, []string{"verify", bundle}, name + ": not a regular file"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, ok := runGuarded(t, []string{"CUA_DATA_DIR=" + data}, tt.args...)
			if !ok {
				t.Fatalf("cua %s did not answer (a blocking read)\nstderr: %s", strings.Join(tt.args, " "), r.stderr)
			}
			if strings.Contains(r.stderr, "out of memory") {
				t.Fatalf("out of memory:\n%.2000s", r.stderr)
			}
			if r.code == 0 {
				t.Errorf("exit 0, want a refusal\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("output does not name %q:\nstdout: %s\nstderr: %.2000s", tt.want, r.stdout, r.stderr)
			}
		})
	}
}

// TestObserveSpecialFiles: `cua observe` over a library holding runs whose
// events.jsonl is a symlink to /dev/zero or a FIFO keeps answering (the
// runs are not served) and never dies of out of memory.
func TestObserveSpecialFiles(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for id, kind := range map[string]string{"r-zero": "zero", "r-fifo": "fifo"} {
		run := filepath.Join(data, "runs", id)
		if err := os.MkdirAll(run, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(run, "events.jsonl")
		if kind == "fifo" {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(`{"run_id":"`+id+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "observe", "--all", "--addr", "127.0.0.1:0", "--data-dir", data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, br); exited <- cmd.Wait() }()
	if err != nil {
		t.Fatalf("observe banner: %q, %v\nstderr: %s", line, err, errb.String())
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("observe banner names no URL: %q", line)
	}
	base := strings.TrimSpace(line[i:])
	client := &http.Client{Timeout: hangGuard}
	for _, path := range []string{"/", "/runs/r-zero", "/runs/r-fifo", "/runs/r-zero/events.jsonl"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v\nstderr: %.2000s", path, err, errb.String())
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	select {
	case err := <-exited:
		t.Fatalf("observe exited: %v\nstderr: %.2000s", err, errb.String())
	default:
	}
	if strings.Contains(errb.String(), "out of memory") {
		t.Fatalf("out of memory:\n%.2000s", errb.String())
	}
}
