// Package logs builds the CLI's log/slog handlers for Kopf's log formats:
//
//	plain  the message and its key=value attributes
//	full   "[time] [LEVEL   ] " before that (the default, as in Kopf)
//	json   one JSON object per record (slog's JSON handler)
//
// The CLI's -v/-d/-q flags pick the level (see option.Logging); the host
// and its modules log through the handler the CLI builds here.
package logs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Formats are the names --log-format accepts.
var Formats = []string{"plain", "full", "json"}

// NewHandler returns a handler writing records at level and above to w in
// format ("plain", "full" or "json").
func NewHandler(w io.Writer, format string, level slog.Leveler) (slog.Handler, error) {
	switch format {
	case "json":
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), nil
	case "plain", "full":
		return &textHandler{out: &lockedWriter{w: w}, level: level, full: format == "full"}, nil
	}
	return nil, fmt.Errorf("unknown log format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// lockedWriter serializes writes of handlers derived from one another.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// textHandler writes one line per record: the optional time and level, the
// message, and the attributes as key=value (values quoted when needed).
type textHandler struct {
	out    *lockedWriter
	level  slog.Leveler
	full   bool
	prefix string // group prefix for keys, "g." or ""
	attrs  string // pre-rendered attributes of WithAttrs
}

// Enabled implements slog.Handler.
func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// Handle implements slog.Handler.
func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if h.full {
		t := r.Time
		if t.IsZero() {
			t = time.Now()
		}
		fmt.Fprintf(&b, "[%s] [%-8s] ", t.Format("2006-01-02 15:04:05.000"), r.Level.String())
	}
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.prefix, a)
		return true
	})
	b.WriteByte('\n')
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := io.WriteString(h.out.w, b.String())
	return err
}

// WithAttrs implements slog.Handler.
func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range attrs {
		writeAttr(&b, h.prefix, a)
	}
	c := *h
	c.attrs += b.String()
	return &c
}

// WithGroup implements slog.Handler.
func (h *textHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix += name + "."
	return &c
}

func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			writeAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix + a.Key)
	b.WriteByte('=')
	s := a.Value.String()
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}
