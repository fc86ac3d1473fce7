package logs

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
)

func TestHandlers(t *testing.T) {
	tests := []struct {
		format string
		want   string // a regexp for the whole output
	}{
		{format: "plain", want: `^handled handler=create_fn obj.name="a b" obj.n=1\n$`},
		{format: "full", want: `^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[INFO    \] handled handler=create_fn obj.name="a b" obj.n=1\n$`},
		{format: "json", want: `^\{"time":"[^"]+","level":"INFO","msg":"handled","handler":"create_fn","obj":\{"name":"a b","n":1\}\}\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			h, err := NewHandler(&buf, tt.format, slog.LevelInfo)
			if err != nil {
				t.Fatal(err)
			}
			log := slog.New(h).With("handler", "create_fn")
			log.Debug("hidden")
			log.WithGroup("obj").Info("handled", "name", "a b", "n", 1)
			if !regexp.MustCompile(tt.want).MatchString(buf.String()) {
				t.Errorf("output %q does not match %s", buf.String(), tt.want)
			}
		})
	}
	if _, err := NewHandler(&bytes.Buffer{}, "xml", slog.LevelInfo); err == nil || !strings.Contains(err.Error(), "plain, full, json, kopf, kopf-plain, kopf-json") {
		t.Errorf("unknown format: error = %v", err)
	}
}

// Kopf's layouts: "[time] logger-name [LEVEL] [namespace/name] message"
// (kopf) and "[namespace/name] message" (kopf-plain), the object taken
// from the "object" group wherever it was added; the attributes that name
// the object, cycle, handler and module are left to the prefix and the
// message, the others follow it.
func TestKopfLayouts(t *testing.T) {
	object := slog.Group("object", "kind", "KopfExample", "namespace", "ns", "name", "ex")
	tests := []struct {
		name   string
		format string
		log    func(*slog.Logger)
		want   string // a regexp for the whole output
	}{
		{"kopf, an object's record", "kopf", func(l *slog.Logger) {
			l.Info("Handler 'create_fn' succeeded.", object, "cycle", "c1", "handler", "create_fn", "module", "m")
		}, `^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] kopf\.objects         \[INFO    \] \[ns/ex\] Handler 'create_fn' succeeded\.\n$`},
		{"kopf, the object from With", "kopf", func(l *slog.Logger) {
			l.With(object).Warn("slow", "took", "2s")
		}, `^\[[^]]+\] kopf\.objects         \[WARNING \] \[ns/ex\] slow took=2s\n$`},
		{"kopf, no object", "kopf", func(l *slog.Logger) {
			l.Error("cannot watch", "resource", "pods")
		}, `^\[[^]]+\] kopf                 \[ERROR   \] cannot watch resource=pods\n$`},
		{"kopf-plain, a namespaced object", "kopf-plain", func(l *slog.Logger) {
			l.Debug("Adding the finalizer, thus preventing the actual deletion.", object)
		}, `^\[ns/ex\] Adding the finalizer, thus preventing the actual deletion\.\n$`},
		{"kopf-plain, a cluster-scoped object", "kopf-plain", func(l *slog.Logger) {
			l.Info("Creation is processed: 1 succeeded; 0 failed.", slog.Group("object", "kind", "Node", "namespace", "", "name", "n1"))
		}, `^\[n1\] Creation is processed: 1 succeeded; 0 failed\.\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			h, err := NewHandler(&buf, tt.format, slog.LevelDebug)
			if err != nil {
				t.Fatal(err)
			}
			tt.log(slog.New(h))
			if !regexp.MustCompile(tt.want).MatchString(buf.String()) {
				t.Errorf("output %q does not match %s", buf.String(), tt.want)
			}
		})
	}
}

// kopf-json is Kopf's JSON layout: message, severity (debug, info, warn,
// error), timestamp, and the object under "object".
func TestKopfJSON(t *testing.T) {
	var buf bytes.Buffer
	h, err := NewHandler(&buf, "kopf-json", slog.LevelDebug)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(h)
	log.Warn("slow", slog.Group("object", "kind", "KopfExample", "namespace", "ns", "name", "ex"), "took", "2s")
	log.Debug("quiet")
	want := `^\{"timestamp":"[^"]+","severity":"warn","message":"slow","object":\{"kind":"KopfExample","namespace":"ns","name":"ex"\},"took":"2s"\}\n` +
		`\{"timestamp":"[^"]+","severity":"debug","message":"quiet"\}\n$`
	if !regexp.MustCompile(want).MatchString(buf.String()) {
		t.Errorf("output %q does not match %s", buf.String(), want)
	}
}
