package kopf

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestLogger(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"info with fields", func(l *slog.Logger) { l.Info("child created", "child", "c1", "n", 2) },
			`{"level":"info","message":"child created","fields":{"child":"c1","n":2}}`},
		{"no fields", func(l *slog.Logger) { l.Debug("quiet") }, `{"level":"debug","message":"quiet"}`},
		{"warning with an error", func(l *slog.Logger) { l.Warn("hm", "err", errors.New("boom")) },
			`{"level":"warning","message":"hm","fields":{"err":"boom"}}`},
		{"error with a duration", func(l *slog.Logger) { l.Error("slow", "took", 1500*time.Millisecond) },
			`{"level":"error","message":"slow","fields":{"took":"1.5s"}}`},
		{"attrs and groups", func(l *slog.Logger) {
			l.With("a", 1).WithGroup("g").With("b", 2).Info("m", slog.Group("h", "c", 3), "d", 4)
		}, `{"level":"info","message":"m","fields":{"a":1,"g":{"b":2,"d":4,"h":{"c":3}}}}`},
		{"odd values", func(l *slog.Logger) { l.Info("m", "ch", make(chan int)) },
			`{"level":"info","message":"m","fields":{"fields":"map[ch:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := &recorder{}
			ctx := &Context{req: &abi.Request{}, host: host}
			tt.log(ctx.Logger())
			if len(host.calls) != 1 || host.calls[0].fn != abi.HostLog {
				t.Fatalf("calls = %v", host.calls)
			}
			got := string(host.calls[0].request)
			if tt.name == "odd values" {
				if len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
					t.Errorf("log = %s, want a prefix %s", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("log = %s\nwant  %s", got, tt.want)
			}
		})
	}
}

func TestHostCalls(t *testing.T) {
	host := &recorder{reply: func(fn string, _ []byte) []byte {
		switch fn {
		case abi.HostPostEvent:
			return []byte(`{"error":{"code":429,"reason":"TooManyRequests","message":"slow down","origin":"host"}}`)
		case abi.HostIndexLookup:
			return []byte(`{"values":["a",{"b":1}]}`)
		case abi.HostSleepUntilStopped:
			return []byte(`{"stopped":true,"reason":"deleted"}`)
		case abi.HostIsStopped:
			return []byte(`{"stopped":false}`)
		}
		return nil
	}}
	ctx := &Context{req: &abi.Request{}, host: host}
	err := ctx.PostEvent(EventWarning, "Failed", "it broke")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 {
		t.Errorf("post event error = %v", err)
	}
	values, err := ctx.IndexLookup("byOwner", map[string]string{"ns": "x"})
	if err != nil || jsonString(t, values) != `["a",{"b":1}]` {
		t.Errorf("index lookup = %v, %v", values, err)
	}
	if ctx.Stopped() {
		t.Error("stopped before the host said so")
	}
	if !ctx.SleepUntilStopped(1500*time.Millisecond) || ctx.StopReason() != "deleted" {
		t.Errorf("sleep did not report the stop: %q", ctx.StopReason())
	}
	want := []string{
		`post_event {"type":"Warning","reason":"Failed","message":"it broke"}`,
		`index_lookup {"index":"byOwner","key":{"ns":"x"}}`,
		`is_stopped {}`,
		`sleep_until_stopped {"seconds":1.5}`,
	}
	for i, c := range host.calls {
		if got := c.fn + " " + string(c.request); i >= len(want) || got != want[i] {
			t.Errorf("call %d = %s", i, got)
		}
	}
	silent := &Context{req: &abi.Request{}, host: &recorder{}}
	if !silent.Stopped() || !silent.SleepUntilStopped(time.Second) {
		t.Error("a host without replies does not stop a daemon")
	}
}

// TestLoggerLevel: the request's logLevel (the host's level) drops the
// records below it in the guest, before any host call; an absent or
// unknown level sends every record, as before, for the host to filter.
func TestLoggerLevel(t *testing.T) {
	old := registered
	defer func() { registered = old }()
	registered = &registry{module: abi.ModuleInfo{Name: "levels"}}
	OnCreate("", "v1", "pods", func(c *Context) (any, error) {
		l := c.Logger()
		l.Debug("d")
		l.Info("i")
		l.Warn("w")
		l.Error("e")
		return nil, nil
	}, ID("logs"))
	tests := []struct {
		level string
		want  []string
	}{
		{"", []string{"debug", "info", "warning", "error"}},
		{"debug", []string{"debug", "info", "warning", "error"}},
		{"info", []string{"info", "warning", "error"}},
		{"warning", []string{"warning", "error"}},
		{"error", []string{"error"}},
		{"trace", []string{"debug", "info", "warning", "error"}}, // a newer host's level: the host filters
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			in := `{"handler":"logs","kind":"create","retry":0,"started":"2026-11-24T00:00:00Z"`
			if tt.level != "" {
				in += `,"logLevel":"` + tt.level + `"`
			}
			host := &recorder{}
			if _, err := registered.handleJSON([]byte(in+`}`), host); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range host.calls {
				var rec abi.LogRecord
				if err := json.Unmarshal(c.request, &rec); err != nil || c.fn != abi.HostLog {
					t.Fatalf("call %s %s: %v", c.fn, c.request, err)
				}
				got = append(got, string(rec.Level))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("records sent: %v, want %v", got, tt.want)
			}
		})
	}
}
