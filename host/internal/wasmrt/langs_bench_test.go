package wasmrt

import (
	"context"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// langModule is the kopfexample module of one guest language.
type langModule struct {
	lang string
	wasm []byte
}

// langModules returns the kopfexample module of each guest SDK: Go's
// (examples/kopfexample), the same built with TinyGo, Rust's,
// AssemblyScript's and Python's (examples/<lang>/kopfexample; Python's with
// Kopf's own API, snapshotted after its start). All five register the same
// handlers, and their delete_fn decodes the request and logs one line with
// the object's name.
func langModules(b *testing.B) []langModule {
	return []langModule{
		{"go", wasmtest.Bytes(b, "kopfexample")},
		{"tinygo", guestwasm.Bytes(b, guestwasm.TinyGo, "kopfexample")},
		{"rust", guestwasm.Bytes(b, guestwasm.Rust, "kopfexample")},
		{"assemblyscript", guestwasm.Bytes(b, guestwasm.AssemblyScript, "kopfexample")},
		{"python", guestwasm.Bytes(b, guestwasm.Python, "kopfexample")},
	}
}

// BenchmarkLanguages runs the module benchmarks (BenchmarkLoad,
// BenchmarkInstance, BenchmarkInstanceRSS, BenchmarkHandle) on the
// kopfexample module of every guest language, side by side in one run:
//
//   - load/cold, load/cached: Runtime.Load in a fresh runtime with an empty
//     or a warm compilation cache (wasm-KiB is the module's size);
//   - instance: one more instance, as the pool makes one (instantiation,
//     _initialize if any, one manifest call);
//   - rss: 32 instances held at once after one 1 KB call each, the growth
//     of VmRSS per instance;
//   - call/1KB, call/64KB: Module.Handle of delete_fn with a body of that
//     size (p50 and p99 latency, process CPU per call).
func BenchmarkLanguages(b *testing.B) {
	mods := langModules(b)
	ctx := context.Background()
	for _, cached := range []bool{false, true} {
		name := "load/cold/"
		if cached {
			name = "load/cached/"
		}
		for _, mod := range mods {
			b.Run(name+mod.lang, func(b *testing.B) {
				dir := b.TempDir()
				var compile time.Duration
				loadOnce := func(dir string) {
					b.StopTimer()
					r, err := New(Options{CacheDir: dir, Logger: discardLogger()})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := r.Load(ctx, mod.lang, mod.wasm); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					compile += time.Duration(r.compileNanos.Load())
					_ = r.Close(ctx)
					b.StartTimer()
				}
				if cached {
					loadOnce(dir)
				}
				compile = 0
				b.ResetTimer()
				for range b.N {
					if !cached {
						b.StopTimer()
						dir = b.TempDir()
						b.StartTimer()
					}
					loadOnce(dir)
				}
				b.ReportMetric(float64(len(mod.wasm))/(1<<10), "wasm-KiB")
				b.ReportMetric(float64(compile.Microseconds())/1e3/float64(b.N), "compile-ms/op")
			})
		}
	}
	for _, mod := range mods {
		b.Run("instance/"+mod.lang, func(b *testing.B) {
			r := newRuntime(b, Options{Logger: discardLogger()})
			m, err := r.Load(ctx, mod.lang, mod.wasm)
			if err != nil {
				b.Fatal(err)
			}
			faults := minorFaults()
			b.ResetTimer()
			for range b.N {
				inst, err := newInstance(ctx, r, m.code, m.start)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.invoke(ctx, inst, abi.ExportManifest, nil, nil, nil); err != nil {
					b.Fatal(err)
				}
				inst.close()
			}
			b.ReportMetric(float64(minorFaults()-faults)/float64(b.N), "minflt/op")
		})
	}
	for _, mod := range mods {
		b.Run("rss/"+mod.lang, func(b *testing.B) {
			const n = 32
			for range b.N {
				r := newRuntime(b, Options{PoolSize: n, Logger: discardLogger()})
				m, err := r.Load(ctx, mod.lang, mod.wasm)
				if err != nil {
					b.Fatal(err)
				}
				rss0, heap0 := memoryNow(b)
				held := make([]*instance, 0, n)
				for range n {
					inst, err := m.pool.get(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if _, cerr := m.handle(ctx, inst, request("delete_fn", 1<<10), nil); cerr != nil {
						b.Fatal(cerr)
					}
					held = append(held, inst)
				}
				rss1, heap1 := memoryNow(b)
				b.ReportMetric(float64(rss1-rss0)/n/(1<<10), "RSS-KiB/instance")
				b.ReportMetric(float64(heap1-heap0)/n/(1<<10), "heap-KiB/instance")
				for _, inst := range held {
					m.pool.put(inst)
				}
				m.Close()
				_ = r.Close(ctx)
			}
		})
	}
	for _, size := range []int{1 << 10, 64 << 10} {
		for _, mod := range mods {
			b.Run("call/"+sizeName(size)+"/"+mod.lang, func(b *testing.B) {
				r := newRuntime(b, Options{Logger: discardLogger()})
				m, err := r.Load(ctx, mod.lang, mod.wasm)
				if err != nil {
					b.Fatal(err)
				}
				req := request("delete_fn", size)
				req.Kind, req.Reason = abi.KindDelete, abi.ReasonDelete
				benchmarkCalls(b, m, req)
			})
		}
	}
}
