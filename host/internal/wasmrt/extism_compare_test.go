package wasmrt

// The host's Extism kernel (kernel.go, kernelfuncs.go, kernelhttp.go)
// against Extism's own: the same go-pdk guests, built once, run under this
// runtime and under github.com/extism/go-sdk (which keeps its kernel in
// the extism-runtime.wasm module it ships), with the same input bytes;
// their outputs, errors, variables, HTTP responses and log records must
// be the same. go-sdk is a test-only dependency.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	extism "github.com/extism/go-sdk"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// logLine is a log record of the guest: its level and message.
type logLine struct {
	level string
	msg   string
}

// extismLevels names go-sdk's log levels as the host's records name theirs.
var extismLevels = map[extism.LogLevel]string{
	extism.LogLevelTrace: "DEBUG-4", extism.LogLevelDebug: "DEBUG", extism.LogLevelInfo: "INFO",
	extism.LogLevelWarn: "WARN", extism.LogLevelError: "ERROR",
}

// outcome is what one call gave: its output, or its error's message, and
// the guest's log records.
type outcome struct {
	out  string
	err  string
	logs []logLine
}

// underExtism runs guest under go-sdk: one plugin (one instance, so
// variables persist from call to call, as in a host instance), WASI on
// (the guests are wasip1 reactors), HTTP allowed to 127.0.0.1 with the
// response headers kept (the go-pdk guests read them).
type underExtism struct {
	plugin *extism.Plugin
	mu     sync.Mutex
	logs   []logLine
}

func newUnderExtism(t *testing.T, wasm []byte) *underExtism {
	t.Helper()
	extism.SetLogLevel(extism.LogLevelTrace)
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, AllowedHosts: []string{"127.0.0.1"}}
	p, err := extism.NewPlugin(t.Context(), manifest, extism.PluginConfig{EnableWasi: true, EnableHttpResponseHeaders: true}, nil)
	if err != nil {
		t.Fatalf("go-sdk cannot load the guest: %v", err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	u := &underExtism{plugin: p}
	p.SetLogger(func(level extism.LogLevel, msg string) {
		if sdkOwn(msg) {
			return
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		u.logs = append(u.logs, logLine{extismLevels[level], msg})
	})
	return u
}

// sdkOwn reports whether msg is one of go-sdk's own log messages (v1.7.1:
// its plugin set-up and calls), not the guest's.
func sdkOwn(msg string) bool {
	for _, prefix := range []string{"Calling ", "Initializ", "Result: ", "Error running reactor", "Command module",
		"Reactor module", "WASI runtime", "No runtime", "Haskell runtime", "hs_init", "_initialize function", "_start function"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func (u *underExtism) call(input []byte) outcome {
	u.mu.Lock()
	u.logs = nil
	u.mu.Unlock()
	_, out, err := u.plugin.Call(abi.ExportHandle, input)
	var o outcome
	if err != nil {
		o.err = err.Error()
	} else {
		o.out = string(out)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	o.logs = u.logs
	return o
}

// underHost runs guest under this runtime, in one instance, with no GOGC
// set (go-sdk sets none) and every log level on.
type underHost struct {
	m    *Module
	inst *instance
	logs *logRecorder
}

func newUnderHost(t *testing.T, name string) *underHost {
	t.Helper()
	logs := &logRecorder{}
	r := newRuntime(t, Options{PoolSize: 1, GuestGOGC: -1, Logger: slog.New(logs)})
	m := load(t, r, name)
	inst, err := m.pool.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.pool.put(inst) })
	return &underHost{m: m, inst: inst, logs: logs}
}

func (h *underHost) call(t *testing.T, req *abi.Request, input []byte) outcome {
	h.logs.mu.Lock()
	h.logs.records = nil
	h.logs.mu.Unlock()
	out, cerr := h.m.invoke(t.Context(), h.inst, abi.ExportHandle, input, req, nil)
	var o outcome
	if cerr != nil {
		o.err = cerr.Err.Error()
	} else {
		o.out = string(out)
	}
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	for _, r := range h.logs.records {
		if source := attr(r, "source"); source == "extism" {
			o.logs = append(o.logs, logLine{r.Level.String(), r.Message})
		}
	}
	return o
}

// attr is the value of a record's attribute key, "" without one.
func attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

// kernelCase is one call: the request (its handler, param and body size)
// and, for the record, what the guest should give under both.
type kernelCase struct {
	name    string
	handler string
	param   any
	body    int    // bytes of the request's body
	raw     string // when set, the input instead of the encoded request
	want    string // a substring of the output, or of the error with wantErr
	wantErr bool
	// trap: the kernel refuses the guest's request (a trap, not an error
	// the guest sets); each kernel words it its own way (the host's says
	// what to do), so only want is compared.
	trap bool
}

// TestKernelLikeExtism calls the go-pdk test guests "good" and "extism"
// with a table of inputs under the host's kernel and under go-sdk's, and
// compares every outcome.
func TestKernelLikeExtism(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Reply", r.Header.Get("X-Guest")+"-"+r.URL.Path)
		switch r.URL.Path {
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("b", 1<<20)))
		case "/missing":
			http.Error(w, "no such thing", http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte("hello guest"))
		}
	}))
	t.Cleanup(srv.Close)
	guests := []struct {
		name  string
		cases []kernelCase
	}{
		{"good", []kernelCase{
			{name: "ok", handler: "ok", body: 100, want: `"message":"ok"`},
			{name: "decode", handler: "decode", body: 100, want: `hello example`},
			{name: "echo small", handler: "echo", body: 10, want: `"result":{`},
			{name: "echo 64 KiB", handler: "echo", body: 64 << 10, want: `xxxx`},
			{name: "echo 1 MiB", handler: "echo", body: 1 << 20, want: `xxxx`},
			{name: "echo 3 MiB", handler: "echo", body: 3 << 20, want: `xxxx`},
			{name: "empty input", raw: " ", want: "unexpected end of JSON input", wantErr: true},
			{name: "not JSON", raw: "{not json", want: "invalid character", wantErr: true},
		}},
		{"extism", []kernelCase{
			{name: "vars 1", handler: "vars", body: 100, want: `"result":1`},
			{name: "vars 2", handler: "vars", body: 100, want: `"result":2`},
			{name: "vars 3, large input", handler: "vars", body: 1 << 20, want: `"result":3`},
			{name: "config", handler: "config", body: 100, want: `{"found":false}`},
			{name: "env", handler: "env", body: 100, want: `{"GOGC":""}`},
			{name: "log", handler: "log", body: 100, want: `"result":null`},
			{name: "http", handler: "http", param: srv.URL + "/ping", body: 100, want: `"status":202`},
			{name: "http 404", handler: "http", param: srv.URL + "/missing", body: 100, want: `"status":404`},
			{name: "http 1 MiB", handler: "http", param: srv.URL + "/big", body: 100, want: `bbbb`},
			{name: "http to a host not allowed", handler: "http", param: "http://localhost:1/x", body: 100,
				want: "not allowed", wantErr: true, trap: true},
			{name: "error", handler: "error", body: 100, want: "extism guest: deliberate error", wantErr: true},
		}},
	}
	for _, g := range guests {
		t.Run(g.name, func(t *testing.T) {
			wasm := guest(t, g.name)
			ext := newUnderExtism(t, wasm)
			host := newUnderHost(t, g.name)
			for _, tc := range g.cases {
				req := request(tc.handler, tc.body)
				if tc.param != nil {
					req.Param, _ = json.Marshal(tc.param)
				}
				input, err := json.Marshal(req)
				if err != nil {
					t.Fatal(err)
				}
				if tc.raw != "" {
					input = []byte(tc.raw)
				}
				got, want := host.call(t, req, input), ext.call(input)
				sameErr := got.err == want.err || (tc.trap && strings.Contains(want.err, tc.want))
				if got.out != want.out || !sameErr || !equalLogs(got.logs, want.logs) {
					t.Errorf("%s: the host's kernel gave\n %.300q, error %q, logs %v\ngo-sdk's\n %.300q, error %q, logs %v",
						tc.name, got.out, got.err, got.logs, want.out, want.err, want.logs)
					continue
				}
				if text := got.out + got.err; !strings.Contains(text, tc.want) || (got.err != "") != tc.wantErr {
					t.Errorf("%s: both gave %.300q, error %q; want %q (an error: %v)", tc.name, got.out, got.err, tc.want, tc.wantErr)
				}
			}
		})
	}
}

func equalLogs(a, b []logLine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
