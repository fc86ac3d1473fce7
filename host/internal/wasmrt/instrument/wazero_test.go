package instrument

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// flagName is the export name the tests give the flag global.
const flagName = "kopf_interrupt"

// guests are the standard-Go test guests and an example, built by
// wasmtest.
var guests = []string{
	"testguests/good", "testguests/misbehave", "testguests/hostcalls",
	"testguests/reactor", "testguests/spawning", "kopfexample",
}

// TestInterruptibleGoGuests instruments real modules built by the Go
// toolchain: wazero must accept the result, and the number of checks
// found in the output (counted as byte patterns, independently of the
// walker) must equal the number of loops plus the number of calling
// bodies the walker saw.
func TestInterruptibleGoGuests(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for _, pkg := range guests {
		t.Run(pkg, func(t *testing.T) {
			in := wasmtest.Bytes(t, pkg)
			r := rewriter{in: in, name: flagName}
			if err := r.run(); err != nil {
				t.Fatal(err)
			}
			check := r.check
			inserted := bytes.Count(r.out, check) - bytes.Count(in, check)
			if r.loops == 0 || r.entries == 0 || inserted != r.loops+r.entries {
				t.Errorf("%d checks inserted, %d loops, %d entries", inserted, r.loops, r.entries)
			}
			compiled, err := rt.CompileModule(ctx, r.out)
			if err != nil {
				t.Fatalf("compiling the instrumented module: %v", err)
			}
			defer compiled.Close(ctx)
			t.Logf("%d bytes, %d loops, %d entries, +%d bytes", len(in), r.loops, r.entries, len(r.out)-len(in))
		})
	}
}

// TestInterruptibleStopsLoop runs the counter module, instrumented, in a
// runtime that does not close modules on context cancellation: the
// counting function still works, and an endless loop ends with a trap once
// another goroutine sets the flag.
func TestInterruptibleStopsLoop(t *testing.T) {
	mod := instantiate(t, counterModule(""))
	if got := call(t, mod, "count", 1000); got != 1000 {
		t.Fatalf("count(1000) = %d", got)
	}
	flag := mod.ExportedGlobal(flagName).(api.MutableGlobal)
	stopAfterFlag(t, flag, "spin", func() error {
		_, err := mod.ExportedFunction("spin").Call(context.Background())
		return err
	})
	flag.Set(0)
	if got := call(t, mod, "count", 7); got != 7 {
		t.Fatalf("count(7) after clearing the flag = %d", got)
	}
}

// TestInterruptibleStopsRecursion runs the recursive module, instrumented,
// in a runtime that does not close modules on context cancellation:
// pow2(60), 2^60 calls and no loop, ends with a trap once another
// goroutine sets the flag, which the entry check of pow2 sees; the leaf
// double, which has no check, and pow2 of small n still work.
func TestInterruptibleStopsRecursion(t *testing.T) {
	mod := instantiate(t, recursiveModule(""))
	if got := call(t, mod, "pow2", 10); got != 1024 {
		t.Fatalf("pow2(10) = %d", got)
	}
	if got := call(t, mod, "double", 21); got != 42 {
		t.Fatalf("double(21) = %d", got)
	}
	flag := mod.ExportedGlobal(flagName).(api.MutableGlobal)
	stopAfterFlag(t, flag, "pow2(60)", func() error {
		_, err := mod.ExportedFunction("pow2").Call(context.Background(), api.EncodeU32(60))
		return err
	})
	if got := call(t, mod, "double", 4); got != 8 {
		t.Fatalf("double(4) with the flag set = %d", got)
	}
	flag.Set(0)
	if got := call(t, mod, "pow2", 5); got != 32 {
		t.Fatalf("pow2(5) after clearing the flag = %d", got)
	}
}

// instantiate instruments wasm and instantiates it in a runtime that does
// not close modules on context cancellation, closed at the end of the
// test.
func instantiate(t *testing.T, wasm []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	wasm, err := Interruptible(wasm, flagName)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// stopAfterFlag runs run, a call that does not end by itself, in a
// goroutine, sets flag 50 ms later and expects run to end with an
// unreachable trap; it fails after 30 s instead of hanging.
func stopAfterFlag(t *testing.T, flag api.MutableGlobal, what string, run func() error) {
	t.Helper()
	stop := time.AfterFunc(50*time.Millisecond, func() { flag.Set(1) })
	defer stop.Stop()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- run() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("%s returned %v, want an unreachable trap", what, err)
		}
		t.Logf("%s stopped after %v: %v", what, time.Since(start), strings.SplitN(err.Error(), "\n", 2)[0])
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop 30 s after the flag was set", what) // the goroutine leaks; the test binary ends
	}
}

// call calls the (i32) -> i32 export name of mod with n.
func call(t *testing.T, mod api.Module, name string, n uint32) uint32 {
	t.Helper()
	res, err := mod.ExportedFunction(name).Call(context.Background(), api.EncodeU32(n))
	if err != nil {
		t.Fatalf("%s(%d): %v", name, n, err)
	}
	return api.DecodeU32(res[0])
}

// TestInterruptibleLetsTheCollectorRun shows why the checks yield: native
// wasm code has no point where the Go scheduler can preempt it, so a
// stop-the-world of the garbage collector waits for a guest to leave it.
// count(2^29) runs for a second or more; a runtime.GC started while it
// runs must finish before it returns, which it does only because every
// 4096th check leaves native code (memory.grow 0) in a module with a
// memory. Without the yield the collector, and with it every goroutine,
// would wait for the count to end.
func TestInterruptibleLetsTheCollectorRun(t *testing.T) {
	counter := module(
		sec(1, vec(i32i32Type)),
		sec(3, vec([]byte{0x00})),
		sec(5, vec([]byte{0x00, 0x01})), // a memory: one page
		sec(7, vec(funcExport("count", 0))),
		code(fn(vec([]byte{0x01, 0x7f}), countTo(plainLoop))),
	)
	mod := instantiate(t, counter)
	const n = 1 << 29
	var counted, collected time.Time
	done := make(chan struct{}, 2)
	go func() {
		defer func() { counted = time.Now(); done <- struct{}{} }()
		if got := call(t, mod, "count", n); got != n {
			t.Errorf("count(%d) = %d", n, got)
		}
	}()
	time.Sleep(20 * time.Millisecond) // let the count start
	go func() {
		runtime.GC()
		collected = time.Now()
		done <- struct{}{}
	}()
	<-done
	<-done
	if !collected.Before(counted) {
		t.Fatalf("the collection ended %v after the count: the guest did not yield", collected.Sub(counted))
	}
	t.Logf("the collection ended %v before the count", counted.Sub(collected))
}
