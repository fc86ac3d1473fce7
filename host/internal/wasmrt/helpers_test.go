package wasmrt

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// guest returns the bytes of a test guest built from examples/testguests.
func guest(tb testing.TB, name string) []byte {
	tb.Helper()
	return wasmtest.Bytes(tb, "testguests/"+name)
}

// cacheDir is a compilation cache shared by the tests' runtimes, so that
// each guest is compiled to native code once per test binary.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmrt-test-cache-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// newRuntime returns a runtime with opts that is closed when the test ends;
// its logs go to the test's log. Unless opts says otherwise it uses the
// shared compilation cache.
func newRuntime(tb testing.TB, opts Options) *Runtime {
	tb.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = cacheDir
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	r, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

// load loads a test guest into r and fails the test if it cannot.
func load(tb testing.TB, r *Runtime, name string) *Module {
	tb.Helper()
	m, err := r.Load(context.Background(), name, guest(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// request returns a request for handler with a body of about size bytes.
func request(handler string, size int) *abi.Request {
	body := []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"example"},"spec":{"field":"`)
	body = append(body, bytes.Repeat([]byte("x"), max(0, size-len(body)-3))...)
	body = append(body, `"}}`...)
	return &abi.Request{
		Handler: handler, Kind: abi.KindCreate, Reason: abi.ReasonCreate,
		Name: "example", Namespace: "default", UID: "0000-1111",
		Body: body, Started: time.Unix(1700000000, 0).UTC(),
	}
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// logRecorder is a slog handler that keeps records for assertions.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
	attrs   []slog.Attr
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}

func (h *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

func (h *logRecorder) WithGroup(string) slog.Handler { return h }

// find returns the attributes of the first record with msg.
func (h *logRecorder) find(msg string) (map[string]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Message != msg {
			continue
		}
		attrs := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		return attrs, true
	}
	return nil, false
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
