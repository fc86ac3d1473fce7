package kopf

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/hostcall"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/jsonfast"
)

// Logger is the handler's logger. Records go to the host's log through the
// log host function; the host adds the module, handler and object. Records
// below the host's level (the request's logLevel) are dropped before they
// are built: Enabled is false for them.
func (c *Context) Logger() *slog.Logger {
	if c.logger == nil {
		var level abi.LogLevel
		if c.req != nil {
			level = c.req.LogLevel
		}
		c.logger = slog.New(&logHandler{host: c.host, min: minLevel(level)})
	}
	return c.logger
}

// logHandler is a slog.Handler that writes abi.LogRecords to the host. It
// enables the levels from min up; the host filters what it gets too.
type logHandler struct {
	host   hostcall.Host
	min    slog.Level
	attrs  []slog.Attr
	groups []string
}

// Enabled reports whether the host writes records of level.
func (h *logHandler) Enabled(_ context.Context, level slog.Level) bool { return level >= h.min }

// minLevel is the lowest slog level of the records that the host writes
// at its level l, the reverse of logLevel: every level for "" and "debug"
// (the host writes debug records), and for a level this SDK does not know,
// which the host then filters.
func minLevel(l abi.LogLevel) slog.Level {
	if level, ok := l.Slog(); ok && l != abi.LogDebug {
		return level
	}
	return math.MinInt
}

// Handle sends one record to the host.
func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	fields := map[string]any{}
	for _, a := range h.attrs {
		putAttr(fields, a)
	}
	scope := fields
	for _, g := range h.groups {
		scope = ensureMap(scope, g)
	}
	r.Attrs(func(a slog.Attr) bool {
		putAttr(scope, a)
		return true
	})
	rec := abi.LogRecord{Level: logLevel(r.Level), Message: r.Message}
	if len(fields) > 0 {
		rec.Fields = fields
	}
	raw, ok := appendLogRecord(make([]byte, 0, 128), &rec)
	if !ok {
		var err error
		if raw, err = json.Marshal(rec); err != nil {
			rec.Fields = map[string]any{"fields": fmt.Sprint(fields)}
			if raw, err = json.Marshal(rec); err != nil {
				return err
			}
		}
	}
	h.host.Call(abi.HostLog, raw)
	return nil
}

// appendLogRecord is json.Marshal of rec without reflection, or false when
// a field's value needs encoding/json (or cannot be encoded).
func appendLogRecord(b []byte, rec *abi.LogRecord) ([]byte, bool) {
	b = jsonfast.AppendString(append(b, `{"level":`...), string(rec.Level))
	b = jsonfast.AppendString(append(b, `,"message":`...), rec.Message)
	if len(rec.Fields) > 0 {
		var ok bool
		if b, ok = jsonfast.Append(append(b, `,"fields":`...), rec.Fields); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	if len(h.groups) > 0 {
		attrs = []slog.Attr{nest(h.groups, attrs)}
	}
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup returns a handler that nests the next attributes under name.
func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

func nest(groups []string, attrs []slog.Attr) slog.Attr {
	a := slog.Attr{Key: groups[len(groups)-1], Value: slog.GroupValue(attrs...)}
	for i := len(groups) - 2; i >= 0; i-- {
		a = slog.Attr{Key: groups[i], Value: slog.GroupValue(a)}
	}
	return a
}

func putAttr(into map[string]any, a slog.Attr) {
	v := a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	switch v.Kind() {
	case slog.KindGroup:
		scope := into
		if a.Key != "" {
			scope = ensureMap(into, a.Key)
		}
		for _, g := range v.Group() {
			putAttr(scope, g)
		}
	case slog.KindDuration:
		into[a.Key] = v.Duration().String()
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			into[a.Key] = x.Error()
		case Object:
			// As a plain map the record encodes without reflection
			// (ctx.Spec() and friends are common attributes).
			into[a.Key] = map[string]any(x)
		default:
			into[a.Key] = x
		}
	default:
		into[a.Key] = v.Any()
	}
}

func logLevel(l slog.Level) abi.LogLevel {
	switch {
	case l < slog.LevelInfo:
		return abi.LogDebug
	case l < slog.LevelWarn:
		return abi.LogInfo
	case l < slog.LevelError:
		return abi.LogWarn
	}
	return abi.LogError
}
