package recordcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/record/recordtest"
	"github.com/cuahq/cua/internal/replay"
)

// pin is the PIN typed on the GTK fixture's sign-on page: it must appear
// in no byte the recording writes. scanCanary looks for canary, so the
// PIN is the canary.
const pin = canary

// fixtureLaunch is the --launch command of the desktop surface's GTK
// fixture app, with extra arguments before the URL.
func fixtureLaunch(t *testing.T, extra ...string) []string {
	t.Helper()
	script, err := filepath.Abs("../../surface/desktop/testdata/fixture.py")
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]string{"/usr/bin/python3", script}, extra...), "{url}")
}

// TestRecordDesktopFixture is issue 28's Done-when on the desktop: cua
// record --surface desktop --launch starts the GTK fixture in a private
// Xvfb and AT-SPI session and serves the recording page over it; a
// scripted person in her own Chromium signs on with a PIN, types a name
// and presses Greet on the live picture (X screenshots, AT-SPI input) and
// marks the greeting as an output. The sealed capability replays SUCCESS
// on the fixture with another name (of the three letters the recorder inferred), fails closed when Greet is renamed,
// and the PIN is in no byte the recording wrote.
func TestRecordDesktopFixture(t *testing.T) {
	r := startRecord(t, "http://fixture/signon.html", "--surface", "desktop", "--launch", strings.Join(fixtureLaunch(t), " "),
		"--goal", "Sign on and greet Ada", "--id", "fixture.recorded_greet", "--input", "who=Ada", "--secret", "PIN=fixture_pin")
	p, err := recordtest.SignIn(personTab(t), r.session.URL(), r.token)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"click PIN", func() error { return p.Click(recordtest.Target{Role: "textbox", Name: "PIN"}) }},
		{"type the PIN", func() error { return p.Type(pin) }},
		{"click Sign on", func() error { return p.Click(recordtest.Target{Role: "button", Name: "Sign on"}) }},
		{"click Name", func() error { return p.Click(recordtest.Target{Role: "textbox", Name: "Name"}) }},
		{"type the name", func() error { return p.Type("Ada") }},
		{"click Greet", func() error { return p.Click(recordtest.Target{Role: "button", Name: "Greet"}) }},
		{"mark the greeting", func() error { return p.Mark("output", "greeting", "text", recordtest.Target{Role: "status"}) }},
	}
	page := ""
	for _, s := range steps {
		if err = s.do(); err != nil {
			err = &stepError{s.what, err}
			break
		}
	}
	if err == nil {
		page, err = p.Stop()
	}
	if err != nil {
		if png, serr := p.Screenshot(); serr == nil {
			_ = os.WriteFile(filepath.Join(os.TempDir(), "cua-record-desktop-failed.png"), png, 0o600)
		}
		t.Fatalf("%v\nrecorded so far: %+v\nstderr: %s", err, r.session.Recording().Summary(), r.errOut.String())
	}
	if err := <-r.done; err != nil {
		t.Fatalf("cua record: %v\npage: %s\nstdout: %s\nstderr: %s", err, page, r.out.String(), r.errOut.String())
	}
	if !strings.Contains(r.out.String(), "eval: SUCCESS") || !strings.Contains(r.out.String(), "greeting = Hello, Ada (Red)") {
		t.Errorf("stdout does not report a passing eval with the greeting:\n%s", r.out.String())
	}
	file := filepath.Join(r.outDir, "fixture.recorded_greet@1.0.0.yaml")
	loaded, err := capability.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := os.ReadFile(file); err == nil {
		t.Logf("%s:\n%s", file, text)
	}
	checkDesktopShape(t, loaded.Capability)
	replayFixture(t, loaded)
	scanCanary(t, map[string]string{"stdout": r.out.String(), "stderr": r.errOut.String(), "page": page}, r.outDir, r.dataDir)
}

type stepError struct {
	what string
	err  error
}

func (e *stepError) Error() string { return e.what + ": " + e.err.Error() }

// checkDesktopShape checks the recorded capability: desktop, the name an
// input, the PIN a secret, the greeting an output.
func checkDesktopShape(t *testing.T, c *domain.Capability) {
	t.Helper()
	if c.Surface != domain.SurfaceDesktop {
		t.Errorf("surface %q, want desktop", c.Surface)
	}
	if len(c.Inputs) != 1 || c.Inputs[0].Name != "who" {
		t.Errorf("inputs %+v, want who only", c.Inputs)
	}
	if len(c.Outputs) != 1 || c.Outputs[0].Name != "greeting" {
		t.Errorf("outputs %+v, want greeting", c.Outputs)
	}
	secrets := 0
	for _, s := range c.Steps {
		if s.Value != nil && s.Value.Secret == "fixture_pin" {
			secrets++
		}
	}
	if secrets != 1 {
		t.Errorf("%d steps type the PIN as secret fixture_pin, want 1", secrets)
	}
}

// replayFixture replays the sealed capability on fresh fixtures: another
// name greets, and a renamed Greet button fails closed.
func replayFixture(t *testing.T, loaded *capability.Loaded) {
	t.Helper()
	for _, c := range []struct {
		extra  []string
		status domain.RunStatus
		code   domain.FailureCode
	}{
		{nil, domain.StatusSuccess, ""},
		{[]string{"--rename", "Greet=Salute"}, domain.StatusNeedsHuman, domain.CodeTargetNotFound},
	} {
		l := launch.New(launch.Options{Kind: domain.SurfaceDesktop, BaseURL: "http://fixture/signon.html",
			Desktop: launch.DesktopOptions{Command: fixtureLaunch(t, c.extra...)}})
		sess, err := l.Open(t.Context())
		if err != nil {
			l.Close()
			t.Fatal(err)
		}
		rec, err := replay.Run(t.Context(), replay.Options{Capability: loaded, Inputs: map[string]string{"who": "Bob"},
			BaseURL: "http://fixture/signon.html", Surface: sess, Secrets: secretMap{"fixture_pin": "4321"}})
		sess.Close()
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != c.status || rec.FailureCode != c.code {
			t.Errorf("replay %v: %s %s (%s), want %s %s", c.extra, rec.Status, rec.FailureCode, rec.Message, c.status, c.code)
			continue
		}
		if c.status == domain.StatusSuccess && rec.Outputs["greeting"] != "Hello, Bob (Red)" {
			t.Errorf("greeting = %v, want Hello, Bob (Red)", rec.Outputs["greeting"])
		}
		t.Logf("replay %v: %s %s outputs %v", c.extra, rec.Status, rec.FailureCode, rec.Outputs)
	}
}
