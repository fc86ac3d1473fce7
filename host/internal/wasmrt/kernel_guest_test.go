package wasmrt

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// extismCall calls handler of the extism guest with param and returns the
// response's result.
func extismCall(t *testing.T, m *Module, handler string, param any) (json.RawMessage, error) {
	t.Helper()
	req := request(handler, 100)
	if param != nil {
		b, err := json.Marshal(param)
		if err != nil {
			t.Fatal(err)
		}
		req.Param = b
	}
	resp, err := m.Handle(t.Context(), req, nil)
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}

// leveledRecorder is a logRecorder that enables only min and above.
type leveledRecorder struct {
	*logRecorder
	min slog.Level
}

func (h leveledRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func TestExtismKernelLog(t *testing.T) {
	all := []struct{ msg, level string }{
		{"extism trace", "DEBUG-4"},
		{"extism debug", "DEBUG"},
		{"extism info", "INFO"},
		{"extism warn", "WARN"},
		{"extism error", "ERROR"},
	}
	for _, tc := range []struct {
		name   string
		min    slog.Level
		logged int // how many of all, from the end, reach the logger
	}{
		{"everything", slog.LevelDebug - 4, 5},
		{"info and above", slog.LevelInfo, 3},
		{"errors only", slog.LevelError, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logRecorder{}
			r := newRuntime(t, Options{Logger: slog.New(leveledRecorder{logs, tc.min})})
			m := load(t, r, "extism")
			if _, err := extismCall(t, m, "log", nil); err != nil {
				t.Fatal(err)
			}
			for i, want := range all {
				attrs, ok := logs.find(want.msg)
				if shown := i >= len(all)-tc.logged; ok != shown {
					t.Errorf("%q reached the logger: %v, want %v", want.msg, ok, shown)
					continue
				}
				if !ok {
					continue
				}
				for k, v := range map[string]string{"level": want.level, "module": "extism", "handler": "log",
					"source": "extism", "namespace": "default", "name": "example"} {
					if attrs[k] != v {
						t.Errorf("%q: attribute %s = %q, want %q (all: %v)", want.msg, k, attrs[k], v, attrs)
					}
				}
			}
		})
	}
}

// TestExtismKernelLogLevel checks what get_log_level tells go-pdk, which
// skips the levels below it without calling the host.
func TestExtismKernelLogLevel(t *testing.T) {
	for _, tc := range []struct {
		min  slog.Level
		want uint64
	}{
		{slog.LevelDebug - 4, 0},
		{slog.LevelDebug, 1},
		{slog.LevelInfo, 2},
		{slog.LevelWarn, 3},
		{slog.LevelError, 4},
		{slog.LevelError + 4, 4},
	} {
		r := newRuntime(t, Options{Logger: slog.New(leveledRecorder{&logRecorder{}, tc.min})})
		s := []uint64{99}
		r.getLogLevel(t.Context(), &call{}, s)
		if s[0] != tc.want {
			t.Errorf("logger at %v: get_log_level = %d, want %d", tc.min, s[0], tc.want)
		}
	}
}

func TestExtismKernelVars(t *testing.T) {
	r := newRuntime(t, Options{PoolSize: 1, Logger: discardLogger()})
	m := load(t, r, "extism")
	for want := 1; want <= 3; want++ {
		res, err := extismCall(t, m, "vars", nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res) != strconv.Itoa(want) {
			t.Errorf("call %d: the counter is %s, want %d", want, res, want)
		}
	}
}

func TestExtismKernelConfig(t *testing.T) {
	r := newRuntime(t, Options{Logger: discardLogger()})
	m := load(t, r, "extism")
	res, err := extismCall(t, m, "config", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != `{"found":false}` {
		t.Errorf("config result %s, want not found", res)
	}
}

// TestGuestGOGC shows that instances get Options.GuestGOGC as their GOGC
// environment variable (default 50), and none with -1.
func TestGuestGOGC(t *testing.T) {
	for _, c := range []struct {
		opt  int
		want string
	}{{0, `{"GOGC":"50"}`}, {25, `{"GOGC":"25"}`}, {-1, `{"GOGC":""}`}} {
		r := newRuntime(t, Options{Logger: discardLogger(), GuestGOGC: c.opt})
		res, err := extismCall(t, load(t, r, "extism"), "env", nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res) != c.want {
			t.Errorf("GuestGOGC %d: the guest sees %s, want %s", c.opt, res, c.want)
		}
	}
}

// replyServer answers a GET that carries the guest's X-Guest header with 202,
// a body and an X-Reply header, and anything else with 400.
func replyServer(t *testing.T, hits *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Method != http.MethodGet || r.Header.Get("X-Guest") != "kopf" || r.URL.Path != "/ping" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Reply", "pong")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("hello guest"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestExtismKernelHTTP(t *testing.T) {
	var hits atomic.Int32
	srv := replyServer(t, &hits)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("the test server is at %s, not 127.0.0.1", srv.URL)
	}
	r := newRuntime(t, Options{Logger: discardLogger()})
	m := load(t, r, "extism")
	res, err := extismCall(t, m, "http", srv.URL+"/ping")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status int
		Body   string
		Header string
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatalf("result %s: %v", res, err)
	}
	if got.Status != http.StatusAccepted || got.Body != "hello guest" || got.Header != "pong" {
		t.Errorf("result %s, want status 202, body %q and header %q", res, "hello guest", "pong")
	}
	if hits.Load() != 1 {
		t.Errorf("the server saw %d requests, want 1", hits.Load())
	}
}

func TestExtismKernelHTTPNotAllowed(t *testing.T) {
	var hits atomic.Int32
	srv := replyServer(t, &hits)
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/ping"
	r := newRuntime(t, Options{Logger: discardLogger()})
	m := load(t, r, "extism")
	_, err := extismCall(t, m, "http", url)
	var cerr *CallError
	if !errors.As(err, &cerr) {
		t.Fatalf("error %v (%T), want a *CallError", err, err)
	}
	msg := cerr.Error()
	if !strings.Contains(msg, "the request to "+url+" is not allowed") || !strings.Contains(msg, "kopf.AllowHosts") {
		t.Errorf("error %q, want it to say the request to %s is not allowed and name kopf.AllowHosts", msg, url)
	}
	if cerr.Module != "extism" || cerr.Handler != "http" {
		t.Errorf("error names module %q handler %q", cerr.Module, cerr.Handler)
	}
	if hits.Load() != 0 {
		t.Errorf("the server saw %d requests, want none", hits.Load())
	}
}

func TestExtismKernelError(t *testing.T) {
	r := newRuntime(t, Options{Logger: discardLogger()})
	m := load(t, r, "extism")
	_, err := extismCall(t, m, "error", nil)
	var cerr *CallError
	if !errors.As(err, &cerr) {
		t.Fatalf("error %v (%T), want a *CallError", err, err)
	}
	if cerr.Kind != KindFailed || cerr.Code != 1 || cerr.Detail != "extism guest: deliberate error" ||
		!strings.Contains(cerr.Error(), "extism guest: deliberate error") {
		t.Errorf("error %q: kind %s, code %d, detail %q; want failed, 1 and the guest's message",
			cerr, cerr.Kind, cerr.Code, cerr.Detail)
	}
}

// TestCopyFunctions calls input_read and output_write as a guest would,
// on a real instance's memory: in range they copy, out of range they fail
// the guest with a one-line kernel error.
func TestCopyFunctions(t *testing.T) {
	m := load(t, newRuntime(t, Options{Logger: discardLogger()}), "good")
	inst, err := m.pool.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer m.pool.put(inst)
	k := newKernel(1 << 20)
	k.setInput([]byte(`{"hello":"guest"}`))
	c := &call{kernel: k, memory: inst.mod.Memory()}
	end := inst.mod.Memory().Size()

	s := []uint64{uint64(end - 100), 5} // a short read copies what was asked
	hostInputRead(t.Context(), c, s)
	if got, _ := inst.mod.Memory().Read(end-100, 5); s[0] != 5 || string(got) != `{"hel` {
		t.Errorf("input_read of 5 bytes: %d, %q", s[0], got)
	}
	s = []uint64{uint64(end - 100), 100} // a long one copies the whole input
	hostInputRead(t.Context(), c, s)
	if s[0] != 17 {
		t.Errorf("input_read copied %d bytes, want 17", s[0])
	}
	hostOutputWrite(t.Context(), c, []uint64{uint64(end - 100), 17})
	if string(k.outputBytes()) != `{"hello":"guest"}` {
		t.Errorf("output = %q", k.outputBytes())
	}
	for name, fn := range map[string]func(){
		"input_read":   func() { hostInputRead(t.Context(), c, []uint64{uint64(end - 4), 17}) },
		"output_write": func() { hostOutputWrite(t.Context(), c, []uint64{uint64(end - 4), 17}) },
	} {
		err := recoverKernelFault(fn)
		if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s past the end of memory: %v, want a one-line kernel error", name, err)
		}
	}
}

// recoverKernelFault runs fn and returns the *kernelError it panicked with.
func recoverKernelFault(fn func()) (err *kernelError) {
	defer func() {
		if v := recover(); v != nil {
			err, _ = v.(*kernelError)
		}
	}()
	fn()
	return nil
}
