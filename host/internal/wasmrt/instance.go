package wasmrt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// stderrBytes is how much of a guest's stderr a call keeps: enough for a
// panic message and the top of its stack.
const stderrBytes = 4 << 10

// instance is one sandbox of a module. It is used by one goroutine at a
// time (the pool guarantees it).
type instance struct {
	plugin *extism.Plugin
	stderr *headBuffer
	input  bytes.Buffer // reused for encoding requests
	busy   atomic.Bool  // set during a call: proof that no call overlaps another
}

func newInstance(ctx context.Context, c *compiled, logger func(extism.LogLevel, string)) (*instance, error) {
	stderr := &headBuffer{max: stderrBytes}
	config := wazero.NewModuleConfig().
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	plugin, err := c.plugin.Instance(withMemoryAllocator(ctx), extism.PluginInstanceConfig{ModuleConfig: config})
	if err != nil {
		return nil, err
	}
	plugin.SetLogger(logger)
	return &instance{plugin: plugin, stderr: stderr}, nil
}

func (i *instance) close() {
	_ = i.plugin.Close(context.Background())
}

// has reports whether the module exports fn.
func (i *instance) has(fn string) bool { return i.plugin.FunctionExists(fn) }

// invoke calls export fn with input and classifies a failure. It never
// panics: a panic in the host during the call becomes a KindInternal.
func (i *instance) invoke(ctx context.Context, fn string, input []byte) (out []byte, cerr *CallError) {
	if !i.busy.CompareAndSwap(false, true) {
		return nil, &CallError{Kind: KindInternal, Err: errors.New("an instance was called by two goroutines at once")}
	}
	defer i.busy.Store(false)
	i.stderr.Reset()
	defer func() {
		if v := recover(); v != nil {
			cerr = &CallError{Kind: KindInternal, Err: fmt.Errorf("panic during the call of %s: %v", fn, v)}
		}
	}()
	rc, out, err := i.plugin.CallWithContext(ctx, fn, input)
	if err == nil && rc == 0 {
		return out, nil
	}
	return nil, i.classify(ctx, rc, err)
}

// classify turns a failed call into a CallError (Module and Handler are
// filled in by the caller).
func (i *instance) classify(ctx context.Context, rc uint32, err error) *CallError {
	detail := strings.TrimSpace(i.stderr.String())
	e := &CallError{Detail: detail, Err: err}
	var exit *sys.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Kind = KindTimeout
	case ctx.Err() != nil:
		e.Kind = KindCanceled
	case outOfMemory(detail):
		e.Kind = KindOutOfMemory
	case errors.As(err, &exit):
		e.Kind, e.Code = KindExit, exit.ExitCode()
		if crashed(detail) {
			e.Kind, e.Code = KindTrap, 0
		}
	case err != nil && strings.Contains(err.Error(), "wasm stack trace"):
		e.Kind = KindTrap
		if detail == "" {
			e.Detail = err.Error()
		}
	default:
		// The export returned normally with a non-zero code (or set an
		// error): the guest's own report, its message in err.
		e.Kind, e.Code = KindFailed, rc
		if err != nil {
			e.Detail = err.Error()
		}
	}
	return e
}

// outOfMemory recognises the messages of guests that could not grow their
// memory (Go's runtime, Rust's allocator).
func outOfMemory(stderr string) bool {
	return strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "memory allocation of")
}

// crashed recognises a runtime crash of a guest that exits afterwards (Go
// panics and fatal errors exit with code 2).
func crashed(stderr string) bool {
	return strings.HasPrefix(stderr, "panic: ") || strings.Contains(stderr, "\npanic: ") ||
		strings.Contains(stderr, "fatal error: ")
}

// headBuffer keeps the first max bytes written to it and drops the rest.
type headBuffer struct {
	max int
	buf bytes.Buffer
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(head(p, room))
	}
	return len(p), nil
}

func (h *headBuffer) Reset()         { h.buf.Reset() }
func (h *headBuffer) String() string { return h.buf.String() }
