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
	if _, err := NewHandler(&bytes.Buffer{}, "xml", slog.LevelInfo); err == nil || !strings.Contains(err.Error(), "plain, full, json") {
		t.Errorf("unknown format: error = %v", err)
	}
}
