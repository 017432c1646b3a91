// Package recordtest is the scripted person of cua record's tests: in a
// Chromium of her own she signs in to the recording page, and works the
// application only through its live picture (clicks on the picture, keys
// sent to it) and its buttons, as a person would. She finds a control on
// the picture with the page's "find on the picture" (its role and name);
// nothing else of the application is visible to her.
package recordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Person is one person's tab on a recording page.
type Person struct {
	ctx context.Context
}

// Target names a control as the page's find does: role, accessible name,
// and optionally the label of its table row (row_of) and its frame.
type Target struct {
	Role  string
	Name  string
	RowOf string
	Frame string
}

func (t Target) json() string {
	m := map[string]any{"role": t.Role}
	if t.Name != "" {
		m["name"] = map[string]string{"value": t.Name, "match": "exact"}
	}
	if t.RowOf != "" {
		m["anchor"] = map[string]string{"relation": "row_of", "text": t.RowOf}
	}
	if t.Frame != "" {
		m["scope"] = map[string]string{"frame": t.Frame}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// SignIn opens the recording page in tab (a chromedp context with cookies
// of its own), signs in with token, and waits until the page has claimed
// the session and shows a picture.
func SignIn(tab context.Context, pageURL, token string) (*Person, error) {
	p := &Person{ctx: tab}
	err := chromedp.Do(tab,
		chromedp.Navigate(pageURL),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-button")),
		chromedp.WaitVisible(chromedp.ID("screen")))
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	if err := p.poll("claimed, first frame", `window.cuaRecord.epoch() > 0 && window.cuaRecord.frames() > 0 && document.getElementById('screen').naturalWidth > 0`); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Person) poll(what, expr string) error {
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		return fmt.Errorf("%s: %w (page status %q)", what, err, p.Status())
	}
	return nil
}

func evalIn[T any](p *Person, what, expr string) (T, error) {
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, func(e *cdpruntime.EvaluateParams) { e.AwaitPromise = new(true) }))
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// Status is the page's status line.
func (p *Person) Status() string {
	s, _ := evalIn[string](p, "status", `document.getElementById('status').textContent`)
	return s
}

// idle waits until every gesture and mark the page queued got its answer.
func (p *Person) idle() error {
	_, err := evalIn[bool](p, "idle", `window.cuaRecord.idle().then(() => true)`)
	return err
}

// clickAt finds t on the picture (waiting up to a minute for it to show)
// and clicks the picture there.
func (p *Person) clickAt(t Target) error {
	expr := fmt.Sprintf(`(async () => {
		const r = await fetch('/record/api/find', {method: 'POST', credentials: 'same-origin',
			headers: {'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf]').content},
			body: %q});
		if (!r.ok) { window.cuaFindError = (await r.json()).error; return false; }
		const at = await r.json(), img = document.getElementById('screen'), b = img.getBoundingClientRect();
		if (!img.naturalWidth || !img.clientWidth) return false;
		const k = img.clientWidth / img.naturalWidth;
		img.dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: b.left + at.x * k, clientY: b.top + at.y * k}));
		return true })()`, t.json())
	if err := p.poll(fmt.Sprintf("click %s %q", t.Role, t.Name+t.RowOf), expr); err != nil {
		why, _ := evalIn[string](p, "find error", `String(window.cuaFindError || '')`)
		return fmt.Errorf("%w; find said %q", err, why)
	}
	return p.idle()
}

// Click clicks the control t on the live picture.
func (p *Person) Click(t Target) error {
	if err := p.clickAt(t); err != nil {
		return err
	}
	if s := p.Status(); !strings.HasPrefix(s, "recorded") {
		return fmt.Errorf("click %s %q: the page says %q", t.Role, t.Name, s)
	}
	return nil
}

// Type sends text to the picture, one key at a time, as keys pressed
// while the picture has focus.
func (p *Person) Type(text string) error {
	for _, r := range text {
		expr := fmt.Sprintf(`(() => { const img = document.getElementById('screen'); img.focus();
			img.dispatchEvent(new KeyboardEvent('keydown', {key: %q, bubbles: true, cancelable: true})); return true })()`, string(r))
		if _, err := evalIn[bool](p, "type", expr); err != nil {
			return err
		}
	}
	if err := p.idle(); err != nil {
		return err
	}
	if s := p.Status(); !strings.HasPrefix(s, "recorded") {
		return fmt.Errorf("type: the page says %q", s)
	}
	return nil
}

// Mark marks t on the picture: kind output (with name and type), outcome
// (name) or checkpoint.
func (p *Person) Mark(kind, name, typ string, t Target) error {
	expr := fmt.Sprintf(`(() => { document.getElementById('mark-name').value = %q;
		if (%q) document.getElementById('mark-type').value = %q;
		document.getElementById('mark-' + %q).click(); return window.cuaRecord.marking() })()`, name, typ, typ, kind)
	armed, err := evalIn[bool](p, "arm "+kind, expr)
	if err != nil {
		return err
	}
	if !armed {
		return fmt.Errorf("mark %s: the page did not arm it: %q", kind, p.Status())
	}
	if err := p.clickAt(t); err != nil {
		return err
	}
	if s := p.Status(); !strings.HasPrefix(s, "marked") {
		return fmt.Errorf("mark %s %s: the page says %q", kind, name, s)
	}
	return nil
}

// Branch starts another pass from the start.
func (p *Person) Branch() error {
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.ID("branch"))); err != nil {
		return err
	}
	return p.idle()
}

// Stop presses Stop and returns the result the page shows once the
// recording is compiled, sealed and replayed.
func (p *Person) Stop() (string, error) {
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.ID("stop"))); err != nil {
		return "", err
	}
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`!document.getElementById('result').hidden`,
		chromedp.WithPollingTimeout(3*time.Minute))); err != nil {
		return "", fmt.Errorf("stop: %w (page status %q)", err, p.Status())
	}
	return evalIn[string](p, "result", `document.getElementById('result').textContent`)
}

// Screenshot is the person's tab as PNG.
func (p *Person) Screenshot() ([]byte, error) {
	return chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
}

// content is a control of MemberDesk's content frame.
func content(role, name string) Target { return Target{Role: role, Name: name, Frame: "content"} }

// RecordLookup is the whole demonstration of docs/tutorial/record.md,
// click by click: sign on (password), search member 12345, mark the
// balance (money), the status (text) and the member's heading
// (checkpoint); then a branch with member 99999 marked member_not_found.
// It does not press Stop.
func (p *Person) RecordLookup(password string) error {
	search := Target{Role: "link", Name: "Member Search", Frame: "nav"}
	steps := []struct {
		what string
		do   func() error
	}{
		{"click Operator ID", func() error { return p.Click(content("textbox", "Operator ID")) }},
		{"type the operator", func() error { return p.Type("OP1001") }},
		{"click Password", func() error { return p.Click(content("textbox", "Password")) }},
		{"type the password", func() error { return p.Type(password) }},
		{"click Sign on", func() error { return p.Click(content("button", "Sign on")) }},
		{"click Member Search", func() error { return p.Click(search) }},
		{"click Member number", func() error { return p.Click(content("textbox", "Member number")) }},
		{"type the member", func() error { return p.Type("12345") }},
		{"click Search", func() error { return p.Click(content("button", "Search")) }},
		{"mark the balance", func() error {
			return p.Mark("output", "savings_balance", "money", Target{Role: "cell", RowOf: "Savings Balance", Frame: "content"})
		}},
		{"mark the status", func() error {
			return p.Mark("output", "status", "text", Target{Role: "cell", RowOf: "Status", Frame: "content"})
		}},
		{"mark the checkpoint", func() error { return p.Mark("checkpoint", "", "", content("heading", "Member 12345")) }},
		{"branch", p.Branch},
		{"branch: click Member Search", func() error { return p.Click(search) }},
		{"branch: click Member number", func() error { return p.Click(content("textbox", "Member number")) }},
		{"branch: type an unknown member", func() error { return p.Type("99999") }},
		{"branch: click Search", func() error { return p.Click(content("button", "Search")) }},
		{"mark the outcome", func() error {
			return p.Mark("outcome", "member_not_found", "", Target{Role: "status", Frame: "content"})
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}
