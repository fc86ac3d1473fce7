package instrument

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// FuzzInterruptible feeds arbitrary bytes to Interruptible and Bounded:
// neither may panic, every error must be one of the documented kinds, an
// output must be accepted again (with another name), and the rewrite of a
// module within bounds is within them. Only a module within bounds goes to
// wazero, as in the host. It is differential against
// wazero: a module that wazero compiles is not called malformed, and
// compiles after the rewrite too; and when it needs no imports, the two
// versions behave the same (see sameBehaviour).
func FuzzInterruptible(f *testing.F) {
	for _, tc := range rewriteCases() {
		f.Add(tc.in)
	}
	f.Add(runnableModule())
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Interruptible(in, "flag")
		if Bounded(in) != nil {
			// wazero may ask for more memory than there is (the seed
			// f94b21bfe6f23c3f): the host does not compile it either.
			return
		}
		before, compileErr := compile(ctx, rt, in)
		if compileErr == nil {
			defer before.Close(ctx)
		}
		if err != nil {
			checkErrorKind(t, err)
			if compileErr == nil && errors.Is(err, ErrMalformed) {
				t.Fatalf("wazero compiles the module, the rewriter calls it malformed: %v", err)
			}
			return
		}
		if compileErr == nil {
			after, err := compile(ctx, rt, out)
			if err != nil {
				t.Fatalf("wazero compiles the module before the rewrite, not after: %v", err)
			}
			defer after.Close(ctx)
			if len(before.ImportedFunctions())+len(before.ImportedMemories()) == 0 {
				sameBehaviour(t, rt, in, before, after)
			}
		}
		if err := Bounded(out); err != nil {
			t.Fatalf("the rewrite of a module within bounds is not: %v", err)
		}
		if _, err := Interruptible(out, "flag2"); err != nil {
			t.Fatalf("output of a successful rewrite refused: %v", err)
		}
	})
}

// compile is rt.CompileModule with a panic of wazero's taken for a
// refusal, as the host takes it (wasmrt's compileModule): wazero v1.11 and
// v1.12 panic validating a call to a function whose type index is out of
// range (the seed eb8b6b2300fa5aeb). The differential checks still hold:
// a module wazero panics on is not one it compiles.
func compile(ctx context.Context, rt wazero.Runtime, in []byte) (mod wazero.CompiledModule, err error) {
	defer func() {
		if v := recover(); v != nil {
			mod, err = nil, fmt.Errorf("wazero panicked: %v", v)
		}
	}()
	return rt.CompileModule(ctx, in)
}

// runnableModule is a valid module with a memory and no imports that
// exports run, () -> i32, which loops (count to 5000) and recurses (2^10
// calls), and trap, () -> i32, which traps: a seed for sameBehaviour.
func runnableModule() []byte {
	run := cat([]byte{0x41}, sleb(5000), []byte{0x10, 0x01, 0x41, 0x0a, 0x10, 0x02, 0x6a, 0x0b})
	return module(
		sec(1, vec([]byte{0x60, 0x00, 0x01, 0x7f}, i32i32Type)),
		sec(3, vec([]byte{0x00}, []byte{0x01}, []byte{0x01}, []byte{0x00})),
		sec(5, vec([]byte{0x00, 0x01})),
		sec(7, vec(funcExport("run", 0), funcExport("trap", 3))),
		code(fn(noLocals, run), fn(vec([]byte{0x01, 0x7f}), countTo(plainLoop)), fn(noLocals, pow2(2)),
			fn(noLocals, []byte{0x00, 0x0b})),
	)
}

// TestSameBehaviour checks the differential check on the runnable seed:
// both versions run it to the same result.
func TestSameBehaviour(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	in := runnableModule()
	out, err := Interruptible(in, "flag")
	if err != nil {
		t.Fatal(err)
	}
	before, err := rt.CompileModule(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	after, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateModule(ctx, after, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := mod.ExportedFunction("run").Call(ctx); err != nil || res[0] != 5000+1024 {
		t.Errorf("run() after the rewrite = %v, %v; want 6024", res, err)
	}
	sameBehaviour(t, rt, in, before, after)
}

// sameBehaviour instantiates both versions of a module without imports
// and calls each exported function that takes no parameters, in the
// export order: the results must be the same, or both calls must fail
// (a trap). The rewrite runs first, and its flag (exported as "flag") is
// set at a short deadline, as the host sets it: a call still running then
// (a loop or a recursion that does not end) ends the comparison, for the
// version before the rewrite could not be stopped (wazero's context checks
// miss a recursion without a loop: the seed 0304c1e31115fdc6 ran for
// ever). Only a module that comparable says can be run is compared.
func sameBehaviour(t *testing.T, rt wazero.Runtime, in []byte, before, after wazero.CompiledModule) {
	t.Helper()
	if !comparable(in) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg := wazero.NewModuleConfig().WithName("")
	m2, err2 := rt.InstantiateModule(ctx, after, cfg)
	m1, err1 := rt.InstantiateModule(ctx, before, cfg)
	if ctx.Err() != nil {
		return
	}
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("instantiation before the rewrite: %v; after: %v", err1, err2)
	}
	if err1 != nil {
		return
	}
	defer m1.Close(context.Background())
	defer m2.Close(context.Background())
	flag, ok := m2.ExportedGlobal("flag").(api.MutableGlobal)
	if !ok {
		t.Fatal("the rewrite exports no mutable global flag")
	}
	defer context.AfterFunc(ctx, func() { flag.Set(1) })()
	names := slices.Sorted(maps.Keys(before.ExportedFunctions()))
	for _, name := range names {
		if len(before.ExportedFunctions()[name].ParamTypes()) > 0 {
			continue
		}
		r2, err2 := m2.ExportedFunction(name).Call(ctx)
		if ctx.Err() != nil {
			return
		}
		r1, err1 := m1.ExportedFunction(name).Call(ctx)
		if (err1 == nil) != (err2 == nil) || !slices.Equal(r1, r2) {
			t.Fatalf("%s() before the rewrite: %v, %v; after: %v, %v", name, r1, err1, r2, err2)
		}
	}
}

// section returns the contents of the module's section id, if it has one.
func section(in []byte, id byte) ([]byte, bool) {
	for i := len(header); i < len(in); {
		size, p, ok := readU32(in, i+1)
		if !ok || uint64(size) > uint64(len(in)-p) {
			return nil, false
		}
		if in[i] == id {
			return in[p : p+int(size)], true
		}
		i = p + int(size)
	}
	return nil, false
}

// comparable reports whether sameBehaviour can run the module in: it has
// no start function, which instantiating it would run before there is a
// flag to set, and it has a memory, without which the rewrite does not
// yield (a call running on would hold up the garbage collector's stop of
// the world, and the timer that sets the flag with it: it hung the test
// under load).
func comparable(in []byte) bool {
	if _, start := section(in, secStart); start {
		return false
	}
	mem, ok := section(in, secMemory)
	n, _, _ := readU32(mem, 0)
	return ok && n > 0
}

// checkErrorKind fails unless err is malformed, an unusable name or
// unsupported.
func checkErrorKind(t *testing.T, err error) {
	t.Helper()
	var unsup *UnsupportedError
	if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrExportName) && !errors.As(err, &unsup) {
		t.Fatalf("undocumented error: %v", err)
	}
}

// BenchmarkInterruptible rewrites a 3.5 MB module built by the Go
// toolchain.
func BenchmarkInterruptible(b *testing.B) {
	in := wasmtest.Bytes(b, "testguests/good")
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Interruptible(in, flagName); err != nil {
			b.Fatal(err)
		}
	}
}
