package exec_test

import (
	"context"
	"errors"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/exec"
	"github.com/cuahq/cua/internal/model/modeltest"
)

// explorer builds testdata/explorer into a temporary directory.
func explorer(tb testing.TB) string {
	tb.Helper()
	goBin, err := osexec.LookPath("go")
	if err != nil {
		tb.Fatalf("the go tool is needed to build the test explorer: %v", err)
	}
	bin := filepath.Join(tb.TempDir(), "explorer")
	out, err := osexec.Command(goBin, "build", "-o", bin, "./testdata/explorer").CombinedOutput()
	if err != nil {
		tb.Fatalf("build explorer: %v\n%s", err, out)
	}
	return bin
}

func TestAnswers(t *testing.T) {
	t.Parallel()
	bin := explorer(t)
	withScreenshot := modeltest.NewRequest()
	withScreenshot.Screenshot = modeltest.Screenshot
	corrected := modeltest.NewRequest()
	corrected.Corrective = "Your previous answer was refused."

	tests := []struct {
		name      string
		mode      string
		req       model.Request
		wantTurn  string
		wantUsage model.Usage
		wantModel string
	}{
		{
			name:      "envelope",
			mode:      "envelope",
			req:       modeltest.NewRequest(),
			wantTurn:  `{"action":"click","element":3,"reason":"the goal names \"Save\" (screenshot: 0 bytes)"}`,
			wantUsage: model.Usage{InputTokens: len(modeltest.NewRequest().Observation), OutputTokens: 7},
			wantModel: "explorer-1",
		},
		{
			name:      "bare turn",
			mode:      "bare",
			req:       modeltest.NewRequest(),
			wantTurn:  `{"action":"click","element":3,"reason":"the goal names \"Save\" (screenshot: 0 bytes)"}`,
			wantModel: "exec:" + bin,
		},
		{
			name:      "screenshot reaches the program",
			mode:      "bare",
			req:       withScreenshot,
			wantTurn:  `{"action":"click","element":3,"reason":"the goal names \"Save\" (screenshot: 23 bytes)"}`,
			wantModel: "exec:" + bin,
		},
		{
			name:      "corrective",
			mode:      "bare",
			req:       corrected,
			wantTurn:  `{"action":"finish","element":0,"reason":"nothing left to click"}`,
			wantModel: "exec:" + bin,
		},
		{
			name:      "prose is returned raw",
			mode:      "prose",
			req:       modeltest.NewRequest(),
			wantTurn:  `I would click element 3.`,
			wantModel: "exec:" + bin,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := exec.New(bin, tc.mode)
			resp, err := m.Decide(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if string(resp.Turn) != tc.wantTurn {
				t.Errorf("Turn = %s\nwant   %s", resp.Turn, tc.wantTurn)
			}
			if resp.Usage != tc.wantUsage {
				t.Errorf("Usage = %+v, want %+v", resp.Usage, tc.wantUsage)
			}
			if resp.Model != tc.wantModel {
				t.Errorf("Model = %q, want %q", resp.Model, tc.wantModel)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	m := exec.New("./bot", "--fast")
	if m.ID() != "exec:./bot" {
		t.Errorf("ID() = %q", m.ID())
	}
	if m.RequiresFrame() {
		t.Error("RequiresFrame() = true")
	}
}

func TestCrash(t *testing.T) {
	t.Parallel()
	m := exec.New(explorer(t), "crash")
	_, err := m.Decide(t.Context(), modeltest.NewRequest())
	if !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("Decide = %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "exit status 3") || !strings.Contains(msg, "cannot reach the planner") {
		t.Errorf("error does not give the exit status and the stderr tail: %v", err)
	}
	if strings.Contains(msg, "noise line 0\n") || len(msg) > 3000 {
		t.Errorf("error quotes more than the tail of stderr (%d bytes)", len(msg))
	}
}

func TestMissingProgram(t *testing.T) {
	t.Parallel()
	m := exec.New(filepath.Join(t.TempDir(), "no-such-bot"))
	if _, err := m.Decide(t.Context(), modeltest.NewRequest()); !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("Decide = %v, want ErrUnavailable", err)
	}
}

func TestHang(t *testing.T) {
	t.Parallel()
	bin := explorer(t)

	t.Run("context deadline", func(t *testing.T) {
		t.Parallel()
		m := exec.New(bin, "hang")
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := m.Decide(ctx, modeltest.NewRequest())
		// The program sleeps an hour: 30 s still proves it was killed, with
		// room for a slow fork, exec and kill on a loaded CI machine.
		if elapsed := time.Since(start); elapsed > 30*time.Second {
			t.Errorf("Decide took %s after its context ended", elapsed)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Decide = %v, want context.DeadlineExceeded", err)
		}
		if errors.Is(err, model.ErrUnavailable) {
			t.Errorf("the caller's own deadline is not an outage: %v", err)
		}
	})

	t.Run("model timeout", func(t *testing.T) {
		t.Parallel()
		m := exec.New(bin, "hang")
		m.Timeout = 300 * time.Millisecond
		start := time.Now()
		_, err := m.Decide(t.Context(), modeltest.NewRequest())
		if elapsed := time.Since(start); elapsed > 30*time.Second { // the program sleeps an hour
			t.Errorf("Decide took %s past its timeout", elapsed)
		}
		if !errors.Is(err, model.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Decide = %v, want ErrUnavailable and DeadlineExceeded", err)
		}
	})
}
