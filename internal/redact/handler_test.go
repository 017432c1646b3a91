package redact

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

type secretValuer struct{ v string }

func (s secretValuer) LogValue() slog.Value { return slog.StringValue("valuer " + s.v) }

type bankUser struct {
	Owner string `json:"owner"`
	Token string `json:"token"`
}

func newTestLogger(tb testing.TB, r *Redactor, json bool) (*slog.Logger, *bytes.Buffer) {
	tb.Helper()
	var buf bytes.Buffer
	var inner slog.Handler = slog.NewTextHandler(&buf, nil)
	if json {
		inner = slog.NewJSONHandler(&buf, nil)
	}
	return slog.New(NewHandler(inner, r)), &buf
}

func TestHandler(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want []string // substrings that must appear in text output
		// wantJSON, when set, replaces want for JSON output.
		wantJSON []string
	}{
		{"message", func(l *slog.Logger) { l.Info("typed " + secret) }, []string{"typed [REDACTED]"}, nil},
		{"string attr", func(l *slog.Logger) { l.Info("m", "value", secret) }, []string{"[REDACTED]"}, nil},
		{"sensitive key", func(l *slog.Logger) { l.Info("m", slog.String("password", "anything")) }, []string{"password", "[REDACTED]"}, nil},
		{"sensitive key harmless", func(l *slog.Logger) { l.Info("m", slog.Bool("password_set", true)) }, []string{"password_set"}, nil},
		{"pattern", func(l *slog.Logger) { l.Info("m", "to", "jane@example.com") }, []string{"[REDACTED:email]"}, nil},
		{"number", func(l *slog.Logger) { l.Info("m", "pan", int64(4111111111111111), "n", 7) }, []string{"[REDACTED:card]"}, nil},
		{"group", func(l *slog.Logger) {
			l.Info("m", slog.Group("req", slog.String("body", secret), slog.Group("inner", slog.String("x", secret))))
		}, []string{"req.body=[REDACTED] req.inner.x=[REDACTED]"}, []string{`"req":{"body":"[REDACTED]","inner":{"x":"[REDACTED]"}}`}},
		{"error", func(l *slog.Logger) { l.Error("m", "err", errors.New("login "+secret+" refused")) }, []string{"login [REDACTED] refused"}, nil},
		{"stringer", func(l *slog.Logger) { l.Info("m", "s", shown(secret)) }, []string{"shown:[REDACTED]"}, nil},
		{"log valuer", func(l *slog.Logger) { l.Info("m", "v", secretValuer{secret}) }, []string{"valuer [REDACTED]"}, nil},
		{"struct", func(l *slog.Logger) { l.Info("m", "acct", bankUser{Owner: secret, Token: "t"}) }, []string{"[REDACTED]"}, nil},
		{"map", func(l *slog.Logger) { l.Info("m", "m", map[string]any{"k": []any{secret}}) }, []string{"[REDACTED]"}, nil},
		{"bytes", func(l *slog.Logger) { l.Info("m", "b", []byte(secret)) }, []string{`b="[REDACTED]"`}, []string{`"b":"W1JFREFDVEVEXQ=="`}},
		{"with attrs", func(l *slog.Logger) { l.With("run", secret).Info("m") }, []string{"[REDACTED]"}, nil},
		{"with group", func(l *slog.Logger) {
			l.WithGroup("g").With("a", secret).WithGroup("h").Info("m", "b", secret)
		}, []string{"g.a=[REDACTED]", "g.h.b=[REDACTED]"}, []string{`"g":{"a":"[REDACTED]","h":{"b":"[REDACTED]"}}`}},
		{"secret group name", func(l *slog.Logger) { l.WithGroup(secret).Info("m", "a", 1) }, []string{"[REDACTED].a=1"}, []string{`"[REDACTED]":{"a":1}`}},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			format := "text"
			if asJSON {
				format = "json"
			}
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				b := setup(t, secret)
				l, buf := newTestLogger(t, b.r, asJSON)
				tt.log(l)
				out := buf.String()
				if strings.Contains(out, secret) || strings.Contains(out, "anything") || strings.Contains(out, "jane@") {
					t.Fatalf("secret leaked: %s", out)
				}
				want := tt.want
				if asJSON && tt.wantJSON != nil {
					want = tt.wantJSON
				}
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q: %s", w, out)
					}
				}
			})
		}
	}
}

func TestHandlerLiteralRegisteredAfterWith(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l, buf := newTestLogger(t, b.r, false)
	run := l.With("password_hint", "swordfish").WithGroup("step").With("typed", "swordfish")
	run.Info("before")
	if !strings.Contains(buf.String(), "swordfish") {
		t.Fatalf("nothing registered yet, want plain text: %s", buf.String())
	}
	buf.Reset()
	b.r.RegisterLiteral("swordfish")
	run.Info("after", "again", "swordfish")
	if out := buf.String(); strings.Contains(out, "swordfish") {
		t.Fatalf("literal registered after With leaked: %s", out)
	}
}

func TestHandlerEnabledAndConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var buf bytes.Buffer
	var mu sync.Mutex
	inner := slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelWarn})
	h := NewHandler(inner, b.r)
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Fatal("Enabled does not follow the wrapped handler")
	}
	l := slog.New(h).With("a", 1)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if j == 25 {
					b.r.RegisterLiteral("topsecret" + string(rune('a'+i)))
				}
				l.Warn("m", "v", "topsecret"+string(rune('a'+i)))
			}
		}()
	}
	wg.Wait()
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
