package agent

import (
	"context"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/targeting"
)

// witness is one independent judgement of an action's effect.
type witness struct {
	name   string
	direct bool // a direct witness confirms or denies conclusively
	says   int  // +1 confirms, -1 denies, 0 silent
}

// verify waits for the action's effect and judges it with independent
// witnesses: the snapshot changed, the URL changed, the field holds the
// typed value, the control has focus, the predicted text appeared. A
// direct denial is conclusive; otherwise a direct confirmation, or two
// circumstantial witnesses agreeing, make it "ok"; a silent witness never
// fails an action ("unverified"). It also returns the postcondition the
// recorder will keep: a heading that appeared, or the predicted text.
func (l *loop) verify(ctx context.Context, before *domain.UiSnapshot, beforeKey string, t Turn, a domain.Action, text string) (*domain.UiSnapshot, string, *domain.Predicate) {
	wctx, cancel := context.WithTimeout(ctx, l.cfg.VerifyWait)
	_ = l.disp.WaitChange(wctx, before.Seq)
	cancel()
	after, err := l.disp.Observe(ctx)
	if err != nil {
		return nil, "unverified", nil
	}
	var ws []witness
	ws = append(ws, witness{name: "snapshot", says: boolSay(after.Fingerprint != before.Fingerprint || l.progressKey(after) != beforeKey)})
	ws = append(ws, witness{name: "url", says: boolSay(frameURLs(after) != frameURLs(before))})
	if a.Target != nil && (a.Type == domain.ActType || a.Type == domain.ActSelect) {
		if res, err := targeting.Resolve(after, *a.Target); err == nil {
			n := after.Nodes[res.Node]
			switch {
			case a.Value.IsSecret() || n.States.Password:
				ws = append(ws, witness{name: "value", says: boolSay(n.Value != "")})
			case strings.TrimSpace(n.Value) == strings.TrimSpace(text):
				ws = append(ws, witness{name: "value", direct: true, says: 1})
			default:
				ws = append(ws, witness{name: "value", direct: true, says: -1})
			}
			ws = append(ws, witness{name: "focus", says: boolSay(n.States.Focused)})
		}
	}
	var post *domain.Predicate
	if t.Expect != nil && t.Expect.Kind == "text_appears" && t.Expect.Text != "" {
		q := &domain.TextQuery{Text: t.Expect.Text, Match: domain.MatchContains}
		if ok, _ := targeting.Eval(after, &domain.Predicate{TextPresent: q}); ok {
			ws = append(ws, witness{name: "expect", direct: true, says: 1})
			post = &domain.Predicate{TextPresent: q}
		}
	}
	if h := newHeading(before, after); h != nil {
		post = h
	}
	confirm, direct := 0, false
	for _, w := range ws {
		if w.direct && w.says < 0 {
			return after, "failed", nil
		}
		if w.says > 0 {
			confirm++
			direct = direct || w.direct
		}
	}
	if direct || confirm >= 2 {
		return after, "ok", post
	}
	return after, "unverified", post
}

func boolSay(b bool) int {
	if b {
		return 1
	}
	return 0
}

func frameURLs(s *domain.UiSnapshot) string {
	var b strings.Builder
	b.WriteString(s.URL)
	for _, f := range s.Frames {
		b.WriteString("|" + f.Path + "=" + f.URL)
	}
	return b.String()
}

// newHeading is a node_exists predicate on a heading present after the
// action but not before, if there is one.
func newHeading(before, after *domain.UiSnapshot) *domain.Predicate {
	seen := map[string]bool{}
	for _, n := range before.Nodes {
		if n.Role == "heading" {
			seen[n.Frame+"\x00"+perception.Fold(n.Name)] = true
		}
	}
	for _, n := range after.Nodes {
		if n.Role == "heading" && n.Name != "" && !seen[n.Frame+"\x00"+perception.Fold(n.Name)] {
			d := domain.TargetDescriptor{Role: "heading", Name: &domain.NameMatch{Value: n.Name, Match: domain.MatchExact}}
			if n.Frame != "" {
				d.Scope = &domain.Scope{Frame: n.Frame}
			}
			return &domain.Predicate{NodeExists: &d}
		}
	}
	return nil
}
