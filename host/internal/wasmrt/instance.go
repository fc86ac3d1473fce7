package wasmrt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// stderrBytes is how much of a guest's stderr a call keeps: enough for a
// panic message and the top of its stack.
const stderrBytes = 4 << 10

// instance is one sandbox of a module. It is used by one goroutine at a
// time (the pool guarantees it).
type instance struct {
	mod       api.Module
	exports   map[string]api.Function // looked up once, reused for every call
	kernel    *kernel
	interrupt interrupter
	sleeps    *sleeper // serves the guest's WASI sleeps; ends them with the call
	stderr    *headBuffer
	input     bytes.Buffer // reused for encoding requests
	stack     [1]uint64    // the result of an export
	busy      atomic.Bool  // set during a call: proof that no call overlaps another
	memBytes  int64        // the linear memory's size the pool last counted
	calls     int          // calls that returned the instance to the pool
}

// memorySize is the size of the instance's linear memory in bytes.
func (i *instance) memorySize() int64 {
	if i.mod == nil || i.mod.Memory() == nil {
		return 0
	}
	return int64(i.mod.Memory().Size())
}

// newInstance instantiates c with st and runs the guest's _initialize
// (WASI's reactor initialisation) as a call of its own under ctx.
func newInstance(ctx context.Context, r *Runtime, c *compiled, st start) (*instance, error) {
	stderr := &headBuffer{max: stderrBytes}
	sleeps := &sleeper{}
	config := wazero.NewModuleConfig().
		WithName(""). // instances of one module live side by side
		WithStartFunctions().
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(sleeps.sleep).
		WithRandSource(rand.Reader)
	if r.opts.GuestGOGC > 0 {
		config = config.WithEnv("GOGC", strconv.Itoa(r.opts.GuestGOGC))
	}
	mod, err := c.rt.InstantiateModule(withMemoryAllocator(ctx, st.image), c.code, config)
	if err != nil {
		return nil, err
	}
	if err := st.apply(mod); err != nil {
		_ = mod.Close(ctx)
		return nil, err
	}
	inst := &instance{
		mod:     mod,
		exports: map[string]api.Function{},
		kernel:  newKernel(uint64(r.opts.MemoryLimitPages) * wasmPage),
		stderr:  stderr,
		sleeps:  sleeps,
	}
	if c.interruptible {
		flag, ok := mod.ExportedGlobal(interruptExport).(api.MutableGlobal)
		if !ok {
			inst.close()
			return nil, fmt.Errorf("the instrumented module lacks its %s global", interruptExport)
		}
		inst.interrupt.flag = flag
	}
	if inst.has("_initialize") {
		initCtx, cancel := context.WithTimeout(withCall(ctx, &call{host: NoHost{}, kernel: inst.kernel, memory: mod.Memory()}), r.opts.Timeout)
		_, cerr := inst.invoke(initCtx, "_initialize", nil)
		cancel()
		if cerr != nil {
			inst.close()
			return nil, fmt.Errorf("initialising the guest (_initialize): %w", cerr)
		}
	}
	return inst, nil
}

// wasmPage is the size of a page of linear memory.
const wasmPage = 64 << 10

func (i *instance) close() {
	_ = i.mod.Close(context.Background())
}

// has reports whether the module exports fn.
func (i *instance) has(fn string) bool { return i.export(fn) != nil }

// export returns the function exported as fn, or nil.
func (i *instance) export(fn string) api.Function {
	f, ok := i.exports[fn]
	if !ok {
		f = i.mod.ExportedFunction(fn)
		i.exports[fn] = f
	}
	return f
}

// invoke calls export fn with input and classifies a failure. It never
// panics: a panic in the host during the call becomes a KindInternal. The
// output is the guest's, copied out of the kernel.
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
	f := i.export(fn)
	if f == nil {
		return nil, &CallError{Kind: KindInternal, Err: fmt.Errorf("the module does not export %s", fn)}
	}
	i.kernel.reset()
	i.kernel.setInput(input)
	done := i.interrupt.watch(ctx)
	woke := i.sleeps.watch(ctx)
	i.stack[0] = 0
	err := f.CallWithStack(ctx, i.stack[:])
	woke()
	// A sleep cut short ends the call before the flag may have been raised.
	interrupted := done() || errors.Is(err, errSleepInterrupted)
	rc := uint32(i.stack[0])
	if interrupted && err == nil {
		// The guest returned after its context ended (a host call's late
		// reply, say) before a loop check saw the flag: a call that
		// overran its timeout or its cancellation has no outcome.
		err = ctx.Err()
	}
	if err == nil && rc == 0 {
		return bytes.Clone(i.kernel.outputBytes()), nil
	}
	if err == nil {
		msg := i.kernel.errorMessage()
		if msg == "" {
			msg = fmt.Sprintf("%s returned %d", fn, rc)
		}
		err = errors.New(msg)
	}
	return nil, i.classify(ctx, rc, err, interrupted)
}

// classify turns a failed call into a CallError (Module and Handler are
// filled in by the caller). interrupted: the call's context ended while it
// ran.
func (i *instance) classify(ctx context.Context, rc uint32, err error, interrupted bool) *CallError {
	detail := strings.TrimSpace(i.stderr.String())
	e := &CallError{Detail: detail, Err: err}
	var exit *sys.ExitError
	var kerr *kernelError
	switch {
	case interrupted && errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Kind, e.Err = KindTimeout, ctx.Err() // the guest's trap is its being stopped
	case interrupted:
		e.Kind, e.Err = KindCanceled, ctx.Err()
	case outOfMemory(detail):
		e.Kind = KindOutOfMemory
	case errors.As(err, &kerr):
		e.Kind, e.Err, e.Detail = KindTrap, kerr, kerr.msg
		if strings.HasSuffix(kerr.msg, "(out of memory)") {
			e.Kind = KindOutOfMemory
		}
	case errors.As(err, &exit):
		e.Kind, e.Code = KindExit, exit.ExitCode()
		if crashed(detail) {
			e.Kind, e.Code = KindTrap, 0
		}
	case strings.Contains(err.Error(), "wasm stack trace"):
		e.Kind = KindTrap
		if detail == "" {
			// A guest without stderr says why it traps with error_set
			// first (the AssemblyScript SDK's abort does).
			e.Detail = i.kernel.errorMessage()
		}
		if e.Detail == "" {
			e.Detail = err.Error()
		}
	default:
		// The export returned normally with a non-zero code (or set an
		// error): the guest's own report, its message in err.
		e.Kind, e.Code, e.Detail = KindFailed, rc, err.Error()
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
