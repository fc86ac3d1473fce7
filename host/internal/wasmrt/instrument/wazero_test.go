package instrument

import (
	"bytes"
	"context"
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
// walker) must equal the number of loops the walker saw.
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
			if r.loops == 0 || inserted != r.loops {
				t.Errorf("%d checks inserted, %d loops", inserted, r.loops)
			}
			compiled, err := rt.CompileModule(ctx, r.out)
			if err != nil {
				t.Fatalf("compiling the instrumented module: %v", err)
			}
			defer compiled.Close(ctx)
			t.Logf("%d bytes, %d loops, +%d bytes", len(in), r.loops, len(r.out)-len(in))
		})
	}
}

// TestInterruptibleStopsLoop runs the counter module, instrumented, in a
// runtime that does not close modules on context cancellation: the
// counting function still works, and an endless loop ends with a trap once
// another goroutine sets the flag.
func TestInterruptibleStopsLoop(t *testing.T) {
	ctx := context.Background()
	wasm, err := Interruptible(counterModule(""), flagName)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, mod, "count", 1000); got != 1000 {
		t.Fatalf("count(1000) = %d", got)
	}
	flag := mod.ExportedGlobal(flagName).(api.MutableGlobal)
	stop := time.AfterFunc(50*time.Millisecond, func() { flag.Set(1) })
	defer stop.Stop()

	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := mod.ExportedFunction("spin").Call(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("spin returned %v, want an unreachable trap", err)
		}
		t.Logf("spin stopped after %v: %v", time.Since(start), strings.SplitN(err.Error(), "\n", 2)[0])
	case <-time.After(30 * time.Second):
		t.Fatal("spin did not stop 30 s after the flag was set") // the goroutine leaks; the test binary ends
	}

	flag.Set(0)
	if got := call(t, mod, "count", 7); got != 7 {
		t.Fatalf("count(7) after clearing the flag = %d", got)
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
