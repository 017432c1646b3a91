// Package browser is the Chromium adapter of the [surface.Surface] port. It
// drives one Chromium process over the Chrome DevTools Protocol with chromedp
// (v0.23, the generic API) and gives every [Session] its own isolated browser
// context (Target.createBrowserContext) with one page.
//
// # Perception
//
// [Session.Observe] walks the frame tree of the page and of every
// out-of-process iframe it has attached, reads Accessibility.getFullAXTree per
// frame (the main frame's tree stops at an Iframe node), takes every layout
// box of a target in one DOMSnapshot.captureSnapshot joined on backend node
// id, and stitches the frames into one RAW [domain.UiSnapshot]: roles mapped
// from Chromium's spellings ("RootWebArea", "StaticText", "LayoutTableCell")
// to domain's canonical roles ("document", "text", "cell") by the table in
// role.go, no node dropped except ignored ones and Chromium's layout noise
// (InlineTextBox, LineBreak), whose children are re-parented to the nearest
// kept ancestor, bounds in page CSS pixels (the top document's coordinates,
// independent of scrolling), Frame as the path of frame names (the iframe's
// name attribute, else its id). perception.Normalize cleans the result; no
// package outside this one ever sees a Chromium role name.
//
// A frame's accessibility tree is cached and fetched again only when that
// frame changed: a change counter per frame is bumped by navigation and
// lifecycle events and by a MutationObserver (and input and focus
// listeners) that an isolated world (invisible to the page) runs in every
// document; the cache is also dropped when the document's DOMSnapshot
// signature (nodes, attributes, form values, layout membership) differs,
// or when a media query of its target flips. Invalidation is frame-exact:
// a content frame's navigation or DOM change refetches that frame's tree
// only, never its siblings' or its parent's (axcache.go); a frame whose
// observer is not running yet falls back to every DOM event of its
// target.
//
// # Actions
//
// [Session.Dispatch] acts on a node's Ref ("frameID:backendNodeID:loaderID")
// through CDP, never through CSS selectors: clicks are real mouse events at
// the centre of the node's content quad, sent only when a hit test there
// finds the node (not an overlay); focus is DOM.focus, checked; typing is
// DOM.focus, a check that the field kept focus, a clear, Input.insertText
// and a read-back; selection and read-backs run in the isolated world.
// The session tracks whether the top document came from a POST
// (Network.requestWillBeSent of the main frame's document request; a
// redirect's GET replaces it) and refuses to reload such a document.
//
// # Failure
//
// Every CDP call has a deadline ([Options.CallTimeout]). A renderer crash
// (Inspector.targetCrashed), a detached page, or a lost browser process makes
// every later call return an error wrapping [surface.ErrCrashed] at once. A
// JavaScript dialog blocks the renderer, so while one is open Observe returns
// the last tree plus synthesized dialog nodes without asking the page.
//
// # Layout
//
// One concern per part, as in chromedp: a tracker (tracker.go) records what
// the CDP events of every target say (frames, navigations, POST-backed
// documents, dialogs, out-of-process iframes, the change sequence) and sends
// no command; an axCache (axcache.go) keeps each frame's accessibility tree;
// capture (observe.go) reads the targets, builds the frame graph with the
// pure buildFrameGraph, reads the trees that changed, and stitches them;
// dispatch.go acts; role.go maps roles. The tracker and the frame-graph
// builder are tested on recorded events and hand-built snapshots without
// Chromium.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/cuahq/cua/internal/surface"
)

// DefaultExecPath is the browser started when neither Options.ExecPath nor
// $CUA_BROWSER names one.
const DefaultExecPath = "/usr/bin/chromium"

// Errors of this package. Callers branch on them with errors.Is.
var (
	// ErrNoBrowser is returned by Launch when the browser executable does
	// not exist.
	ErrNoBrowser = errors.New("browser: no browser executable")
	// ErrClosed is returned by every method of a Browser or Session after
	// Close.
	ErrClosed = errors.New("browser: closed")
)

// Options configures Launch.
type Options struct {
	// ExecPath is the browser executable. Default: $CUA_BROWSER, else
	// DefaultExecPath.
	ExecPath string
	// CDPURL attaches to a running browser (ws://… or http://host:port)
	// instead of launching one. Close then leaves that browser running.
	CDPURL string
	// Headful shows a window (needs a display).
	Headful bool
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// CallTimeout is the deadline on every CDP call (default 10s). It also
	// bounds the wait for a new document after an action that navigates.
	CallTimeout time.Duration
	// AppDomains are the capability's allowed_domains: a Chromium service
	// host ([ServiceHosts]) one of them names stays resolvable (an app that
	// signs on through Google accounts).
	AppDomains []string

	netLog string // tests: Chromium's --log-net-log file
}

func (o Options) withDefaults() Options {
	if o.ExecPath == "" {
		o.ExecPath = os.Getenv("CUA_BROWSER")
	}
	if o.ExecPath == "" {
		o.ExecPath = DefaultExecPath
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	return o
}

// Timeouts of the browser's own lifecycle.
const (
	launchTimeout = 30 * time.Second
	closeTimeout  = 10 * time.Second
)

// Browser is one Chromium process (or one attachment to a running browser).
// Its lifetime is the ctx given to Launch, or Close. It is safe for
// concurrent use; sessions made from it may be used concurrently.
type Browser struct {
	opts Options
	log  *slog.Logger

	tmpDir      string // TMPDIR of a launched browser; "" when attached
	profileDir  string // its profile, inside tmpDir
	allocCancel context.CancelFunc
	rootCtx     context.Context
	rootCancel  context.CancelFunc
	lost        <-chan struct{}
	proc        *os.Process // nil when attached
	done        chan struct{}

	mu        sync.Mutex
	sessions  map[*Session]struct{}
	closed    bool
	closeOnce sync.Once
	closeErr  error
}

// Launch starts a headless Chromium (or attaches to opts.CDPURL) and returns
// when it answers. The browser lives until ctx ends or Close is called. It
// returns an error wrapping ErrNoBrowser when the executable is missing.
func Launch(ctx context.Context, opts Options) (*Browser, error) {
	opts = opts.withDefaults()
	b := &Browser{
		opts:     opts,
		log:      opts.Logger.With(slog.String("component", "browser")),
		done:     make(chan struct{}),
		sessions: make(map[*Session]struct{}),
	}
	var allocCtx context.Context
	if opts.CDPURL != "" {
		allocCtx, b.allocCancel = remote.NewAllocator(ctx, opts.CDPURL)
	} else {
		if _, err := os.Stat(opts.ExecPath); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoBrowser, opts.ExecPath, err)
		}
		tmp, err := os.MkdirTemp("", "cua-browser-")
		if err != nil {
			return nil, fmt.Errorf("browser temp dir: %w", err)
		}
		b.tmpDir = tmp
		b.profileDir = filepath.Join(tmp, "profile")
		for _, d := range []string{b.profileDir, filepath.Join(tmp, "home")} {
			if err := os.Mkdir(d, 0o700); err != nil {
				os.RemoveAll(tmp)
				return nil, fmt.Errorf("browser temp dir: %w", err)
			}
		}
		// Chromium's crashpad handler starts whatever the flags say and
		// would write renderer memory (typed secrets) into a dump. Files
		// where its database directories would be keep it from writing any.
		if err := blockCrashDumps(tmp, b.profileDir); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("browser temp dir: %w", err)
		}
		allocCtx, b.allocCancel = chromedp.NewExecAllocator(ctx, b.allocOptions()...)
	}
	logf := func(format string, args ...any) { b.log.Debug(fmt.Sprintf(format, args...)) }
	b.rootCtx, b.rootCancel = chromedp.NewContext(allocCtx,
		chromedp.WithBrowserOption(chromedp.WithBrowserLogf(logf), chromedp.WithBrowserErrorf(logf)))

	// The first call on the root context starts the browser and binds it to
	// rootCtx, so it runs on rootCtx itself and the wait is bounded here.
	errc := make(chan error, 1)
	go func() {
		_, err := chromedp.Targets(b.rootCtx)
		errc <- err
	}()
	timer := time.NewTimer(launchTimeout)
	defer timer.Stop()
	var err error
	select {
	case err = <-errc:
	case <-timer.C:
		err = fmt.Errorf("no answer within %s", launchTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		b.teardown()
		return nil, fmt.Errorf("launch browser: %w", err)
	}
	c := chromedp.FromContext(b.rootCtx)
	b.lost = c.Browser.LostConnection
	b.proc = c.Browser.Process()
	if b.proc != nil && b.profileDir == "" {
		b.profileDir = profileOf(b.proc.Pid)
	}
	b.log.Debug("browser ready", slog.String("exec", opts.ExecPath), slog.String("cdp_url", opts.CDPURL))
	go b.watch(ctx)
	return b, nil
}

// Flags returns the command-line flags cua starts Chromium with (besides
// the profile, headless and first-run flags): no sandbox (it runs as root in
// containers), no GPU, no QUIC, and every background service that would
// talk to anything but the target app turned off, autofill's server queries
// included (they would send form signatures of the bank's pages to Google),
// and crash reporting off (--disable-breakpad keeps crashpad from starting;
// --disable-crash-reporter is the switch's name in newer builds and ignored
// by older ones).
func Flags() []string {
	return []string{
		"--no-sandbox", "--disable-gpu", "--disable-quic",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps", "--disable-breakpad",
		"--disable-crash-reporter",
		"--disable-client-side-phishing-detection", "--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows", "--disable-renderer-backgrounding", "--disable-hang-monitor",
		"--disable-ipc-flooding-protection", "--disable-domain-reliability", "--no-pings",
		"--disable-field-trial-config", "--disable-component-extensions-with-background-pages",
		"--no-service-autorun", "--disable-search-engine-choice-screen",
		"--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,PasswordManagerOnboarding,SafeBrowsing,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying",
		"--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
		"--force-color-profile=srgb", "--mute-audio", "--enable-automation",
	}
}

// ServiceHosts are the hosts Chromium's own background services call
// even with every flag of [Flags]: the component updater
// (update.googleapis.com), CRX downloads (clients2.google.com) and the
// Google account list (accounts.google.com). A launched browser resolves
// none of them (--host-resolver-rules, [ResolverRules]), so nothing about
// the bank's session leaves the machine by DNS or a connection. Through
// a proxy the proxy resolves names, so the rule does not apply there.
var ServiceHosts = []string{"accounts.google.com", "clients2.google.com", "update.googleapis.com"}

// ResolverRules returns the --host-resolver-rules value that makes every
// ServiceHosts entry unresolvable, except one an appDomains entry (a
// policy.allowed_domains entry: host, *.host or origin) covers; "" when
// every service host is the app's.
func ResolverRules(appDomains []string) string {
	var rules []string
	for _, h := range ServiceHosts {
		if !appCovers(appDomains, h) {
			rules = append(rules, "MAP "+h+" ~NOTFOUND")
		}
	}
	return strings.Join(rules, ", ")
}

// appCovers reports whether an allowed_domains entry names host or a
// domain above it.
func appCovers(appDomains []string, host string) bool {
	for _, d := range appDomains {
		if _, rest, ok := strings.Cut(d, "://"); ok {
			d = rest
		}
		if h, _, err := net.SplitHostPort(d); err == nil {
			d = h
		}
		d = strings.ToLower(strings.TrimPrefix(d, "*."))
		if d != "" && (host == d || strings.HasSuffix(host, "."+d)) {
			return true
		}
	}
	return false
}

// allocOptions starts the browser binary itself (not Debian's wrapper
// script, which sources /etc/chromium.d and exports API keys), with a
// profile inside the per-run temporary directory and only the environment
// Env returns: no variable of cua's own environment (a CUA_SECRET_* above
// all) reaches the browser or its helpers.
func (b *Browser) allocOptions() []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browserBinary(b.opts.ExecPath)),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(b.profileDir),
		chromedp.NoInheritEnv,
		chromedp.Env(Env(b.tmpDir, b.profileDir, b.opts.Headful, os.Getenv)...),
	}
	flags := Flags()
	if rules := ResolverRules(b.opts.AppDomains); rules != "" {
		flags = append(flags, "--host-resolver-rules="+rules)
	}
	if b.opts.netLog != "" {
		flags = append(flags, "--log-net-log="+b.opts.netLog)
	}
	opts = append(opts, FlagOptions(flags)...)
	if !b.opts.Headful {
		// No initial tab: every session opens its own browser context and
		// page, so the default tab's renderer would only cost start-up time.
		opts = append(opts, chromedp.Headless, chromedp.Flag("no-startup-window", true))
	}
	return opts
}

// FlagOptions converts command-line flags ("--name" or "--name=value", as
// [Flags] returns them) to chromedp allocator options, for a program that
// starts Chromium the way cua does (the bench's floor, tests).
func FlagOptions(flags []string) []chromedp.ExecAllocatorOption {
	opts := make([]chromedp.ExecAllocatorOption, 0, len(flags))
	for _, f := range flags {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// watch marks every session crashed when the browser connection is lost, and
// closes the browser when the Launch context ends.
func (b *Browser) watch(ctx context.Context) {
	select {
	case <-b.lost:
		b.log.Warn("browser connection lost")
		b.mu.Lock()
		sessions := make([]*Session, 0, len(b.sessions))
		for s := range b.sessions {
			sessions = append(sessions, s)
		}
		b.mu.Unlock()
		for _, s := range sessions {
			s.kill(fmt.Errorf("%w: browser process exited or disconnected", surface.ErrCrashed))
		}
		if ctx.Err() != nil {
			b.Close()
		}
	case <-ctx.Done():
		b.Close()
	case <-b.done:
	}
}

// lostErr returns an error wrapping surface.ErrCrashed when the browser is
// gone, else nil.
func (b *Browser) lostErr() error {
	if b.lost == nil {
		return nil
	}
	select {
	case <-b.lost:
		return fmt.Errorf("%w: browser process exited or disconnected", surface.ErrCrashed)
	default:
		return nil
	}
}

// NewSession opens a new isolated browser context with one page. ctx bounds
// the creation only; the session lives until its Close or the browser's end.
// Concurrent calls are safe.
func (b *Browser) NewSession(ctx context.Context) (*Session, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if err := b.lostErr(); err != nil {
		return nil, err
	}
	s, err := newSession(ctx, b)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		s.Close()
		return nil, ErrClosed
	}
	b.sessions[s] = struct{}{}
	b.mu.Unlock()
	return s, nil
}

func (b *Browser) forget(s *Session) {
	b.mu.Lock()
	delete(b.sessions, s)
	b.mu.Unlock()
}

// Close closes every session, stops the browser (a launched one gracefully,
// bounded by a timeout; an attached one is left running) and removes its
// temporary profile. It is idempotent and safe for concurrent use.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		sessions := make([]*Session, 0, len(b.sessions))
		for s := range b.sessions {
			sessions = append(sessions, s)
		}
		b.mu.Unlock()
		for _, s := range sessions {
			s.Close()
		}
		close(b.done)
		if b.lostErr() == nil {
			tctx, cancel := context.WithTimeout(b.rootCtx, closeTimeout)
			if err := chromedp.Cancel(tctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				b.closeErr = fmt.Errorf("close browser: %w", err)
			}
			cancel()
		}
		b.teardown()
	})
	return b.closeErr
}

// teardown cancels the contexts (killing a launched process that is still
// running) and removes the temporary directory.
func (b *Browser) teardown() {
	if b.rootCancel != nil {
		b.rootCancel()
	}
	if b.allocCancel != nil {
		b.allocCancel()
	}
	if b.tmpDir != "" {
		if err := removeAllRetry(b.tmpDir); err != nil {
			b.log.Warn("remove browser temp dir", slog.String("dir", b.tmpDir), slog.String("error", err.Error()))
		}
	}
}

// profileOf returns the --user-data-dir of a running browser process, read
// from /proc (Linux), or "".
func profileOf(pid int) string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	for _, arg := range strings.Split(string(raw), "\x00") {
		if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			return dir
		}
	}
	return ""
}

// crashDir is the crash dump location inside the profile
// (BREAKPAD_DUMP_LOCATION). Launch puts a file there so that no dump can be
// written.
const crashDir = "crashes"

// blockCrashDumps puts a file where each crash database would be: the
// dump location Env names and the default one under HOME.
func blockCrashDumps(tmpDir, profile string) error {
	def := filepath.Join(tmpDir, "home", ".config", "chromium")
	if err := os.MkdirAll(def, 0o700); err != nil {
		return err
	}
	for _, p := range []string{filepath.Join(profile, crashDir), filepath.Join(def, "Crash Reports")} {
		if err := os.WriteFile(p, nil, 0o400); err != nil {
			return err
		}
	}
	return nil
}

// removeAllRetry removes dir, retrying for a while: the browser's helper
// processes may still be writing into it just after the browser exits.
func removeAllRetry(dir string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.RemoveAll(dir)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Env returns the whole environment of a launched browser: an allowlist,
// never cua's own environment. PATH is kept (default
// /usr/local/bin:/usr/bin:/bin), HOME is tmpDir/home, TMPDIR is tmpDir,
// BREAKPAD_DUMP_LOCATION points crashpad's database at profile/crashes
// (which Launch makes unusable, so no dump is written; were one written, it
// would be removed with tmpDir), and LANG, LC_ALL, TZ, FONTCONFIG_FILE and FONTCONFIG_PATH
// are kept when set; a headful browser also keeps DISPLAY, WAYLAND_DISPLAY,
// XAUTHORITY and XDG_RUNTIME_DIR. getenv is os.Getenv outside tests.
func Env(tmpDir, profile string, headful bool, getenv func(string) string) []string {
	path := getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + filepath.Join(tmpDir, "home"),
		"TMPDIR=" + tmpDir,
		"BREAKPAD_DUMP_LOCATION=" + filepath.Join(profile, crashDir),
	}
	keep := []string{"LANG", "LC_ALL", "TZ", "FONTCONFIG_FILE", "FONTCONFIG_PATH"}
	if headful {
		keep = append(keep, "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR")
	}
	for _, k := range keep {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// debianWrapper is the launcher script of Debian's chromium package and the
// binary it runs.
const (
	debianWrapper = "/usr/bin/chromium"
	debianBinary  = "/usr/lib/chromium/chromium"
)

// browserBinary returns the executable to start for path: the binary behind
// Debian's wrapper script (which would source /etc/chromium.d, where a file
// may turn the crash reporter on, and export API keys into the browser's
// environment), else path itself.
func browserBinary(path string) string {
	if path != debianWrapper {
		return path
	}
	head := make([]byte, 2)
	f, err := os.Open(path)
	if err != nil {
		return path
	}
	defer f.Close()
	if n, _ := f.Read(head); n != 2 || string(head) != "#!" {
		return path
	}
	if st, err := os.Stat(debianBinary); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return path
	}
	return debianBinary
}
