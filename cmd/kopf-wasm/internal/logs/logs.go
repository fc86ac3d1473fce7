// Package logs builds the CLI's log/slog handlers for Kopf's log formats:
//
//	plain       the message and its key=value attributes
//	full        "[time] [LEVEL   ] " before that (the default, as in Kopf)
//	json        one JSON object per record (slog's JSON handler)
//	kopf        Kopf's own layout, as its default --log-format=full writes:
//	            "[2026-01-02 15:04:05,123] kopf.objects         [INFO    ] [ns/name] message"
//	kopf-plain  Kopf's --log-format=plain: "[ns/name] message"
//	kopf-json   Kopf's --log-format=json: {"timestamp", "severity" (debug,
//	            info, warn, error), "message", "object": {kind, namespace,
//	            name}, and the other attributes}
//
// In Kopf's layouts the object a record is about (the "object" group the
// host adds) becomes the "[namespace/name]" prefix ("[name]" for a
// cluster-scoped one) and the logger's name is kopf.objects, else kopf;
// the attributes that only say which object, cycle, handler and module
// (the prefix and Kopf's messages say so) are left out of an object's
// lines, and the others follow the message as key=value.
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
var Formats = []string{"plain", "full", "json", "kopf", "kopf-plain", "kopf-json"}

// layout is how a text handler lays a record out.
type layout int

const (
	layoutPlain     layout = iota // message key=value...
	layoutFull                    // [time] [LEVEL] message key=value...
	layoutKopf                    // Kopf's full layout, with its object prefix
	layoutKopfPlain               // Kopf's plain layout: [ns/name] message
)

var layouts = map[string]layout{"plain": layoutPlain, "full": layoutFull, "kopf": layoutKopf, "kopf-plain": layoutKopfPlain}

// NewHandler returns a handler writing records at level and above to w in
// format ("plain", "full" or "json").
func NewHandler(w io.Writer, format string, level slog.Leveler) (slog.Handler, error) {
	switch format {
	case "json":
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), nil
	case "kopf-json":
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: kopfJSONKeys}), nil
	}
	if l, ok := layouts[format]; ok {
		return &textHandler{out: &lockedWriter{w: w}, level: level, layout: l}, nil
	}
	return nil, fmt.Errorf("unknown log format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// kopfJSONKeys renames slog's built-in keys to Kopf's JSON ones.
func kopfJSONKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		a.Key = "timestamp"
	case slog.LevelKey:
		a.Key = "severity"
		if l, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(strings.ToLower(pythonLevel(l)))
			if l >= slog.LevelWarn && l < slog.LevelError {
				a.Value = slog.StringValue("warn")
			}
		}
	case slog.MessageKey:
		a.Key = "message"
	}
	return a
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
	layout layout
	prefix string // group prefix for keys, "g." or ""
	attrs  string // pre-rendered attributes of WithAttrs (plain, full)
	// pre are the attributes of WithAttrs in Kopf's layouts, kept until a
	// record tells whether they are about an object.
	pre []prefixed
}

// prefixed is an attribute with the group prefix it was added under.
type prefixed struct {
	prefix string
	attr   slog.Attr
}

func (h *textHandler) kopf() bool { return h.layout == layoutKopf || h.layout == layoutKopfPlain }

// Enabled implements slog.Handler.
func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// Handle implements slog.Handler.
func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if h.kopf() {
		h.kopfLine(&b, r)
	} else {
		if h.layout == layoutFull {
			fmt.Fprintf(&b, "[%s] [%-8s] ", timeOf(r).Format("2006-01-02 15:04:05.000"), r.Level.String())
		}
		b.WriteString(r.Message)
		b.WriteString(h.attrs)
		r.Attrs(func(a slog.Attr) bool {
			writeAttr(&b, h.prefix, a)
			return true
		})
	}
	b.WriteByte('\n')
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := io.WriteString(h.out.w, b.String())
	return err
}

// kopfLine writes r in Kopf's layouts, without the newline.
func (h *textHandler) kopfLine(b *strings.Builder, r slog.Record) {
	all := make([]prefixed, 0, len(h.pre)+r.NumAttrs())
	all = append(all, h.pre...)
	r.Attrs(func(a slog.Attr) bool {
		all = append(all, prefixed{prefix: h.prefix, attr: a})
		return true
	})
	ns, name, about := objectOf(all)
	if h.layout == layoutKopf {
		logger := "kopf"
		if about {
			logger = "kopf.objects"
		}
		fmt.Fprintf(b, "[%s] %-20.20s [%-8.8s] ", timeOf(r).Format("2006-01-02 15:04:05,000"), logger, pythonLevel(r.Level))
	}
	switch {
	case about && ns != "":
		fmt.Fprintf(b, "[%s/%s] ", ns, name)
	case about:
		fmt.Fprintf(b, "[%s] ", name)
	}
	b.WriteString(r.Message)
	for _, p := range all {
		if p.prefix == "" && (p.attr.Key == "object" || about && objectContext[p.attr.Key]) {
			continue
		}
		writeAttr(b, p.prefix, p.attr)
	}
}

// objectContext are the attributes that only say what an object's line is
// about; Kopf's layouts leave them to the prefix and the message.
var objectContext = map[string]bool{"cycle": true, "handler": true, "module": true}

// objectOf finds the "object" group among attrs: the namespace and name of
// the object the record is about, if any.
func objectOf(attrs []prefixed) (namespace, name string, ok bool) {
	for _, p := range attrs {
		if p.prefix != "" || p.attr.Key != "object" || p.attr.Value.Kind() != slog.KindGroup {
			continue
		}
		for _, g := range p.attr.Value.Group() {
			switch g.Key {
			case "namespace":
				namespace = g.Value.String()
			case "name":
				name = g.Value.String()
			}
		}
		ok = name != ""
	}
	return namespace, name, ok
}

// pythonLevel is a level's name as Python's logging writes it.
func pythonLevel(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

func timeOf(r slog.Record) time.Time {
	if r.Time.IsZero() {
		return time.Now()
	}
	return r.Time
}

// WithAttrs implements slog.Handler.
func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if h.kopf() {
		c := *h
		c.pre = make([]prefixed, 0, len(h.pre)+len(attrs))
		c.pre = append(c.pre, h.pre...)
		for _, a := range attrs {
			c.pre = append(c.pre, prefixed{prefix: h.prefix, attr: a})
		}
		return &c
	}
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
