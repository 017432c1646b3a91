package recordcmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/record"
	"github.com/cuahq/cua/internal/record/recordtest"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// canary is the teller's password in these tests: it must appear in no
// byte a recording writes.
const canary = "Canary-Pw-7q3Zx9"

// recording is one `cua record` run in this process, with its streams.
type recording struct {
	out, errOut *syncBuffer
	dataDir     string
	outDir      string
	token       string
	session     *record.Session
	done        chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRecord adds alice to a fresh data directory's store and starts
// `cua record` on target with args, returning once its page is served.
func startRecord(t *testing.T, target string, args ...string) *recording {
	t.Helper()
	r := &recording{out: &syncBuffer{}, errOut: &syncBuffer{}, dataDir: t.TempDir(), done: make(chan error, 1)}
	r.outDir = filepath.Join(t.TempDir(), "caps")
	_, st, err := launch.Catalog(t.Context(), launch.StoreOptions{DataDir: r.dataDir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	r.token, err = principal.NewDirectory(st, nil).Add(t.Context(), principal.Principal{Name: "test@host"}, "alice", principal.Operator)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := cmdutil.TestFactory(map[string]string{})
	f.IO.Out, f.IO.ErrOut = r.out, r.errOut
	started := make(chan *record.Session, 1)
	cmd := NewCmdRecord(f, func(ctx context.Context, o *recordOptions) error {
		o.onStart = func(s *record.Session) { started <- s }
		return runRecord(ctx, o)
	})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(append([]string{"--target", target, "--out", r.outDir, "--data-dir", r.dataDir, "--listen", "127.0.0.1:0",
		"--browser", browserPath()}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	go func() { r.done <- cmd.ExecuteContext(ctx) }()
	select {
	case r.session = <-started:
	case err := <-r.done:
		t.Fatalf("cua record ended before serving its page: %v\nstderr: %s", err, r.errOut.String())
	}
	return r
}

func browserPath() string {
	if p := os.Getenv("CUA_BROWSER"); p != "" {
		return p
	}
	return browser.DefaultExecPath
}

// personTab is a Chromium of the person's own, one tab.
func personTab(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browserPath()), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1400))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	tab, cancel2 := chromedp.NewContext(alloc)
	t.Cleanup(cancel2)
	tab, cancel3 := context.WithTimeout(tab, 5*time.Minute)
	t.Cleanup(cancel3)
	return tab
}

// demonstrate is the person's whole recording of the MemberDesk lookup
// (recordtest.RecordLookup), then Stop; it returns the result the page
// shows. On a failure it leaves the person's tab in
// $TMPDIR/cua-record-failed.png.
func demonstrate(t *testing.T, p *recordtest.Person, s *record.Session) string {
	t.Helper()
	err := p.RecordLookup(canary)
	res := ""
	if err == nil {
		res, err = p.Stop()
	}
	if err != nil {
		if png, serr := p.Screenshot(); serr == nil {
			_ = os.WriteFile(filepath.Join(os.TempDir(), "cua-record-failed.png"), png, 0o600)
		}
		t.Fatalf("%v\nrecorded so far: %+v", err, s.Recording().Summary())
	}
	return res
}

// TestRecordMemberDeskLookup is issue 28's Done-when on the web: a
// scripted person records the MemberDesk lookup through the recording
// page in a Chromium of her own; the sealed capability replays SUCCESS on
// variants a and b, BUSINESS_OUTCOME member_not_found for an unknown
// member, fails closed (TARGET_NOT_FOUND) on the renamed-label variant
// c; the password is in no byte the recording wrote.
func TestRecordMemberDeskLookup(t *testing.T) {
	app, err := mockapp.New(mockapp.Options{Password: canary})
	if err == nil {
		err = app.Open()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	r := startRecord(t, app.URL(), "--goal", "Look up member 12345's savings balance and status",
		"--id", "memberdesk.recorded_lookup", "--input", "member_id=12345",
		"--secret", "Operator ID=corebank_operator", "--secret", "Password=corebank_password")
	p, err := recordtest.SignIn(personTab(t), r.session.URL(), r.token)
	if err != nil {
		t.Fatal(err)
	}
	page := demonstrate(t, p, r.session)
	if err := <-r.done; err != nil {
		t.Fatalf("cua record: %v\npage: %s\nstdout: %s\nstderr: %s", err, page, r.out.String(), r.errOut.String())
	}
	if !strings.Contains(page, `"passed": true`) {
		t.Fatalf("the page's result does not say the eval passed:\n%s", page)
	}
	for _, want := range []string{"eval: SUCCESS", "eval of the branch ending in member_not_found: BUSINESS_OUTCOME outcome member_not_found"} {
		if !strings.Contains(r.out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.out.String())
		}
	}
	file := filepath.Join(r.outDir, "memberdesk.recorded_lookup@1.0.0.yaml")
	loaded, err := capability.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := os.ReadFile(file); err == nil {
		t.Logf("%s:\n%s", file, text)
	}
	checkShape(t, loaded.Capability)
	replayVariants(t, app, loaded)
	scanCanary(t, map[string]string{"stdout": r.out.String(), "stderr": r.errOut.String(), "page": page}, r.outDir, r.dataDir)
}

// checkShape checks the recorded capability's steps, inputs and outputs.
func checkShape(t *testing.T, c *domain.Capability) {
	t.Helper()
	var ids []string
	for _, s := range c.Steps {
		ids = append(ids, s.ID)
	}
	t.Logf("recorded steps: %s", strings.Join(ids, ", "))
	if c.Provenance == nil || c.Provenance.Source != "demonstration" {
		t.Errorf("provenance %+v, want source demonstration", c.Provenance)
	}
	if len(c.Inputs) != 1 || c.Inputs[0].Name != "member_id" {
		t.Errorf("inputs %+v, want member_id only", c.Inputs)
	}
	types := map[string]domain.ValueType{}
	for _, o := range c.Outputs {
		types[o.Name] = o.Type
	}
	if types["savings_balance"] != domain.TypeMoney || types["status"] != domain.TypeString {
		t.Errorf("outputs %v, want savings_balance money and status string", types)
	}
	secrets := 0
	for _, s := range c.Steps {
		if s.Value != nil && s.Value.Secret != "" {
			secrets++
		}
		if s.Action == domain.ActClick && s.Target != nil && s.Target.Role == "textbox" {
			t.Errorf("step %s only focused a field: it should have been dropped", s.ID)
		}
	}
	if secrets != 2 {
		t.Errorf("%d steps type a secret, want 2 (operator and password)", secrets)
	}
	if len(c.Outcomes) != 1 || c.Outcomes[0].Code != "member_not_found" {
		t.Errorf("outcomes %+v, want member_not_found", c.Outcomes)
	}
}

// replayVariants replays the sealed capability on MemberDesk's variants.
func replayVariants(t *testing.T, app *mockapp.Server, loaded *capability.Loaded) {
	t.Helper()
	client := mockapp.NewClient(app.URL(), nil)
	l := launch.New(launch.Options{BaseURL: app.URL(), Browser: browserPath()})
	defer l.Close()
	sec := secretMap{"corebank_operator": "OP1001", "corebank_password": canary}
	for _, c := range []struct {
		variant, member string
		status          domain.RunStatus
		code            string
	}{
		{"a", "12345", domain.StatusSuccess, ""},
		{"b", "23456", domain.StatusSuccess, ""},
		{"a", "99998", domain.StatusBusinessOutcome, "member_not_found"},
		{"c", "12345", domain.StatusNeedsHuman, string(domain.CodeTargetNotFound)},
	} {
		if err := client.SetVariant(t.Context(), c.variant); err != nil {
			t.Fatal(err)
		}
		sess, err := l.Open(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		rec, err := replay.Run(t.Context(), replay.Options{Capability: loaded, Inputs: map[string]string{"member_id": c.member},
			BaseURL: app.URL(), Surface: sess, Secrets: sec})
		sess.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := rec.Outcome
		if got == "" {
			got = string(rec.FailureCode)
		}
		if rec.Status != c.status || got != c.code {
			t.Errorf("variant %s, member %s: %s %q (%s), want %s %q", c.variant, c.member, rec.Status, got, rec.Message, c.status, c.code)
		} else {
			t.Logf("variant %s, member %s: %s %s outputs %v", c.variant, c.member, rec.Status, got, rec.Outputs)
		}
	}
}

type secretMap map[string]string

func (s secretMap) Secret(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set", ref)
}

// scanCanary fails when the password appears, plain, base64 or hex, in
// any of the streams or any file under the directories.
func scanCanary(t *testing.T, streams map[string]string, dirs ...string) {
	t.Helper()
	forms := []string{canary, base64.StdEncoding.EncodeToString([]byte(canary)), base64.RawURLEncoding.EncodeToString([]byte(canary)),
		hex.EncodeToString([]byte(canary))}
	check := func(where string, b []byte) {
		for _, f := range forms {
			if bytes.Contains(bytes.ToLower(b), bytes.ToLower([]byte(f))) {
				t.Errorf("the password (as %q) is in %s", f, where)
			}
		}
	}
	for name, s := range streams {
		check(name, []byte(s))
	}
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			check(path, b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 3 {
		t.Fatalf("scanned %d files: the recording wrote less than it should (capability, store, eval evidence)", files)
	}
}
