package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/record/recordtest"
)

// recordTutorial is the tutorial TestRecordTutorial runs.
const recordTutorial = "../docs/tutorial/record.md"

// recordURL is the line cua record prints with its page's address.
var recordURL = regexp.MustCompile(`record: (http://\S+/record) `)

// TestRecordTutorial keeps docs/tutorial/record.md true: every cua
// command of its sh blocks must exist with the flags it names; the blocks
// then run in order with the built binary (on free ports instead of 8811
// and 8813), a line ending in & in the background; while cua record runs,
// a scripted person in her own Chromium does the tutorial's clicks on the
// recording page (recordtest.RecordLookup) and presses Stop; the replays
// and the catalog commands after it must succeed and say what the
// tutorial says.
func TestRecordTutorial(t *testing.T) {
	blocks := runbookBlocks(t, recordTutorial)
	app, rec := freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	env := append(os.Environ(), "PATH="+filepath.Dir(binPath)+":"+os.Getenv("PATH"), "CUA_DATA_DIR="+filepath.Join(dir, "data"))
	var outputs strings.Builder
	for _, b := range blocks {
		for _, c := range runbookCommands(b.text) {
			if p := checkCuaCommand(t, c); p != "" {
				t.Fatalf("%s:%d: %s: %s", recordTutorial, b.line, c, p)
			}
		}
		text := strings.NewReplacer("127.0.0.1:8811", app, "127.0.0.1:8813", rec).Replace(b.text)
		var fg []string
		for _, l := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
			switch l = strings.TrimSpace(l); {
			case strings.HasSuffix(l, "&"):
				background(t, dir, env, strings.TrimSuffix(l, "&"), nil)
				waitListening(t, app)
			case strings.HasPrefix(l, "cua record "):
				outputs.WriteString(recordByPerson(t, dir, env, l))
			case l != "":
				fg = append(fg, l)
			}
		}
		if len(fg) > 0 {
			cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+strings.Join(fg, "\n"))
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s:%d: %v\n%s", recordTutorial, b.line, err, out)
			}
			outputs.Write(out)
		}
	}
	for _, want := range []string{"eval: SUCCESS", "BUSINESS_OUTCOME outcome member_not_found",
		"SUCCESS  memberdesk.recorded_lookup@1.0.0", "BUSINESS_OUTCOME  memberdesk.recorded_lookup@1.0.0"} {
		if !strings.Contains(outputs.String(), want) {
			t.Errorf("the tutorial's commands never said %q:\n%s", want, outputs.String())
		}
	}
}

// recordByPerson runs the tutorial's cua record line in the background,
// has the scripted person record the lookup on its page, and returns its
// output once it exits.
func recordByPerson(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	var out syncBuffer
	done := background(t, dir, env, line, &out)
	var page string
	deadline := time.Now().Add(60 * time.Second)
	for page == "" && time.Now().Before(deadline) {
		if m := recordURL.FindStringSubmatch(out.String()); m != nil {
			page = m[1]
		}
		time.Sleep(100 * time.Millisecond)
	}
	if page == "" {
		t.Fatalf("cua record printed no page address:\n%s", out.String())
	}
	token, err := os.ReadFile(filepath.Join(dir, "alice.token"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := recordtest.SignIn(personTab(t), page, strings.TrimSpace(string(token)))
	if err == nil {
		err = p.RecordLookup(password)
	}
	if err == nil {
		_, err = p.Stop()
	}
	if err != nil {
		t.Fatalf("the person: %v\ncua record: %s", err, out.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cua record: %v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("cua record did not exit after Stop:\n%s", out.String())
	}
	return out.String()
}

// background starts a shell line with the built binary; out (when not
// nil) gets its output; the process is killed when the test ends.
func background(t *testing.T, dir string, env []string, line string, out *syncBuffer) <-chan error {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	if out != nil {
		cmd.Stdout, cmd.Stderr = out, out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, exited := make(chan error, 1), make(chan struct{})
	go func() {
		done <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return done
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}

// personTab is a Chromium of the person's own, one tab.
func personTab(t *testing.T) context.Context {
	t.Helper()
	exe := os.Getenv("CUA_BROWSER")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1400))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	tab, cancel2 := chromedp.NewContext(alloc)
	t.Cleanup(cancel2)
	tab, cancel3 := context.WithTimeout(tab, 5*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(fmt.Errorf("the person's browser: %w", err))
	}
	return tab
}
