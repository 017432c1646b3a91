package redact

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
)

// Handler is a [slog.Handler] that redacts every record before passing it
// to the handler it wraps: the message, every attribute key and value,
// through groups, and values that are errors, fmt.Stringers or anything
// else ([Redactor.Value]). Attributes under a sensitive key
// ([IsSensitiveKey]) become Marker.
//
// Attributes and groups added with WithAttrs and WithGroup are kept as given
// and redacted again whenever a literal is registered afterwards, so a
// logger made with logger.With before a secret was known still cannot print
// it. A Handler is safe for concurrent use when the wrapped handler is.
type Handler struct {
	inner slog.Handler
	r     *Redactor
	ops   []handlerOp
	// derived is inner with ops applied, redacted with the literals of
	// generation gen.
	derived atomic.Pointer[derivedHandler]
}

type handlerOp struct {
	group string
	attrs []slog.Attr
}

type derivedHandler struct {
	gen uint64
	h   slog.Handler
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler returns a Handler that redacts with r and writes to inner.
func NewHandler(inner slog.Handler, r *Redactor) slog.Handler {
	return &Handler{inner: inner, r: r}
}

// Enabled reports whether the wrapped handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle redacts rec and passes it on.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.r.attr(a, 0))
		return true
	})
	return h.target().Handle(ctx, out)
}

// WithAttrs returns a Handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.with(handlerOp{attrs: slices.Clone(attrs)})
}

// WithGroup returns a Handler that nests later attributes under name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(handlerOp{group: name})
}

func (h *Handler) with(op handlerOp) *Handler {
	ops := make([]handlerOp, len(h.ops), len(h.ops)+1)
	copy(ops, h.ops)
	return &Handler{inner: h.inner, r: h.r, ops: append(ops, op)}
}

// target returns the wrapped handler with the redacted ops applied, rebuilt
// when the registered literals changed.
func (h *Handler) target() slog.Handler {
	if len(h.ops) == 0 {
		return h.inner
	}
	gen := h.r.generation()
	if d := h.derived.Load(); d != nil && d.gen == gen {
		return d.h
	}
	t := h.inner
	for _, op := range h.ops {
		if op.group != "" {
			t = t.WithGroup(h.r.String(op.group))
			continue
		}
		attrs := make([]slog.Attr, len(op.attrs))
		for i, a := range op.attrs {
			attrs[i] = h.r.attr(a, 0)
		}
		t = t.WithAttrs(attrs)
	}
	h.derived.Store(&derivedHandler{gen: gen, h: t})
	return t
}

// attr returns a redacted copy of a.
func (r *Redactor) attr(a slog.Attr, depth int) slog.Attr {
	v := a.Value.Resolve()
	key := r.String(a.Key)
	if depth > maxDepth {
		return slog.String(key, Marker)
	}
	if a.Key != "" && r.sensitiveKey(a.Key) && !harmlessSlog(v) {
		return slog.String(key, Marker)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(key, r.String(v.String()))
	case slog.KindInt64:
		return slog.Attr{Key: key, Value: r.slogNumber(v, strconv.FormatInt(v.Int64(), 10))}
	case slog.KindUint64:
		return slog.Attr{Key: key, Value: r.slogNumber(v, strconv.FormatUint(v.Uint64(), 10))}
	case slog.KindFloat64:
		return slog.Attr{Key: key, Value: r.slogNumber(v, strconv.FormatFloat(v.Float64(), 'f', -1, 64))}
	case slog.KindGroup:
		group := v.Group()
		attrs := make([]slog.Attr, len(group))
		for i, g := range group {
			attrs[i] = r.attr(g, depth+1)
		}
		return slog.Attr{Key: key, Value: slog.GroupValue(attrs...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(key, r.text(x.Error))
		case []byte:
			return slog.Any(key, r.Bytes(x))
		case fmt.Stringer:
			return slog.String(key, r.text(x.String))
		default:
			return slog.Any(key, r.value(x, depth+1))
		}
	}
	// Bool, Duration, Time.
	return slog.Attr{Key: key, Value: v}
}

func (r *Redactor) slogNumber(v slog.Value, text string) slog.Value {
	if red := r.String(text); red != text {
		return slog.StringValue(red)
	}
	return v
}

// harmlessSlog reports whether a value under a sensitive key reveals
// nothing.
func harmlessSlog(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindBool:
		return true
	case slog.KindString:
		return v.String() == ""
	case slog.KindAny:
		return v.Any() == nil
	}
	return false
}
