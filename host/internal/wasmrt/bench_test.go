package wasmrt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// BenchmarkHandle measures one handler call through the whole path: the
// pool, the request's encoding, Extism's copy of the input into the guest,
// the guest, the copy of the output and the response's decoding.
//
//   - ok: the guest reads its input and returns a constant result, so the
//     time is the runtime's overhead (plus reading the input);
//   - decode: the guest also decodes the whole request with encoding/json,
//     as the guest SDK does;
//   - ok-nointerrupt, decode-nointerrupt: the same compiled without the loop
//     checks that let the timeout stop a guest, to show what they cost.
//
// Besides the mean (ns/op) it reports the p50 and p99 latency and the
// process CPU time per call (which a busy machine inflates less).
func BenchmarkHandle(b *testing.B) {
	cases := []struct {
		handler string
		opts    Options
		sizes   []int
	}{
		{"ok", Options{}, []int{1 << 10, 64 << 10, 1 << 20}},
		{"decode", Options{}, []int{1 << 10, 64 << 10, 1 << 20}},
		{"ok-nointerrupt", Options{noInterrupt: true}, []int{1 << 10, 64 << 10}},
		{"decode-nointerrupt", Options{noInterrupt: true}, []int{1 << 10, 64 << 10}},
	}
	for _, c := range cases {
		for _, size := range c.sizes {
			b.Run(c.handler+"/"+sizeName(size), func(b *testing.B) {
				opts := c.opts
				opts.Logger = discardLogger()
				m := load(b, newRuntime(b, opts), "good")
				req := request(strings.TrimSuffix(c.handler, "-nointerrupt"), size)
				benchmarkCalls(b, m, req)
			})
		}
	}
}

func benchmarkCalls(b *testing.B, m *Module, req *abi.Request) {
	ctx := context.Background()
	if _, err := m.Handle(ctx, req, nil); err != nil { // warm the instance
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(req.Body)))
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := m.Handle(ctx, req, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkLoad measures Load of the good guest (about 3 MB of standard Go)
// in a fresh runtime: cold compiles into an empty cache directory, cached
// finds the native code in the directory from an earlier load. A load also
// instantiates the module, runs its _initialize and reads and validates its
// manifest; compile-ms/op is the part spent getting the compiled code
// (rewriting or reading the rewritten module, and wazero's compile or
// cache look-up, decoding and validation). Creating and closing the
// runtime are not timed.
func BenchmarkLoad(b *testing.B) {
	wasm := guest(b, "good")
	ctx := context.Background()
	var compile time.Duration
	var faults int64
	loadOnce := func(b *testing.B, dir string) {
		b.StopTimer()
		r, err := New(Options{CacheDir: dir, Logger: discardLogger()})
		if err != nil {
			b.Fatal(err)
		}
		f := minorFaults()
		b.StartTimer()
		if _, err := r.Load(ctx, "good", wasm); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		faults += minorFaults() - f
		compile += time.Duration(r.compileNanos.Load())
		_ = r.Close(ctx)
		b.StartTimer()
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(len(wasm))/(1<<20), "wasm-MiB")
		b.ReportMetric(float64(compile.Microseconds())/1e3/float64(b.N), "compile-ms/op")
		b.ReportMetric(float64(faults)/float64(b.N), "minflt/op")
	}
	b.Run("cold", func(b *testing.B) {
		compile, faults = 0, 0
		for range b.N {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			loadOnce(b, dir)
		}
		report(b)
	})
	b.Run("cached", func(b *testing.B) {
		dir := b.TempDir()
		loadOnce(b, dir)
		compile, faults = 0, 0
		b.ResetTimer()
		for range b.N {
			loadOnce(b, dir)
		}
		report(b)
	})
}

// BenchmarkInstance measures a new instance of the good guest, as the pool
// makes one: instantiation (memory, data segments), _initialize and one
// manifest call. minflt/op counts the process's minor page faults: each
// page of linear memory the guest touches first is one.
func BenchmarkInstance(b *testing.B) {
	r := newRuntime(b, Options{Logger: discardLogger()})
	m := load(b, r, "good")
	ctx := context.Background()
	faults := minorFaults()
	for b.Loop() {
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
}

// BenchmarkInstanceRSS measures the resident memory that pooled instances
// of the good guest add to the process: it creates N instances (each runs
// the guest's _initialize and one 1 KB decode call) and reports the growth
// of VmRSS per instance, next to the growth of the Go heap (wazero's own
// structures; the guests' linear memories are mappings outside the heap).
func BenchmarkInstanceRSS(b *testing.B) {
	const n = 32
	for range b.N {
		r := newRuntime(b, Options{PoolSize: n, Logger: discardLogger()})
		m := load(b, r, "good")
		ctx := context.Background()
		rss0, heap0 := memoryNow(b)
		held := make([]*instance, 0, n)
		for range n {
			inst, err := m.pool.get(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, cerr := m.handle(ctx, inst, request("decode", 1<<10), nil); cerr != nil {
				b.Fatal(cerr)
			}
			held = append(held, inst)
		}
		rss1, heap1 := memoryNow(b)
		b.ReportMetric(float64(rss1-rss0)/n/(1<<20), "RSS-MiB/instance")
		b.ReportMetric(float64(heap1-heap0)/n/(1<<20), "heap-MiB/instance")
		for _, inst := range held {
			m.pool.put(inst)
		}
		m.Close()
		_ = r.Close(ctx)
	}
}

// memoryNow returns VmRSS and the Go heap in use, after a full GC.
func memoryNow(b *testing.B) (rss, heap uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status on this system: ", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10, ms.HeapInuse
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0, 0
}

// minorFaults returns the minor page faults the process took so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// cpuTime returns the CPU time the process used so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MB"
	}
	return strconv.Itoa(n>>10) + "KB"
}

// BenchmarkKopfExample calls the handlers of examples/kopfexample, the
// module of the kopfexamples benchmark, with the requests the reactor sends
// it there: the object as the API server returns it (managed fields
// included, ~1 KB), the essence, and for the update the diff. Each handler
// logs one line, as Kopf's example does (to a discarding logger here).
func BenchmarkKopfExample(b *testing.B) {
	r := newRuntime(b, Options{Logger: discardLogger()})
	m, err := r.Load(context.Background(), "kopfexample", wasmtest.Bytes(b, "kopfexample"))
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"creationTimestamp":"2026-11-22T11:22:59Z",` +
		`"finalizers":["kopf.zalando.org/KopfFinalizerMarker"],"generation":1,"managedFields":[{"apiVersion":"kopf.dev/v1",` +
		`"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"kopf.zalando.org/KopfFinalizerMarker\"":{}}}},` +
		`"manager":"kopf-wasm","operation":"Update","time":"2026-11-22T11:22:59Z"},{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:spec":{".":{},"f:field":{}}},"manager":"kopf-wasm-bench-driver","operation":"Update","time":"2026-11-22T11:22:59Z"}],` +
		`"name":"kex-00000","namespace":"bench","resourceVersion":"219","uid":"9db77631-8320-42eb-b970-7fadd031f248"},"spec":{"field":"value-1"}}`)
	ref := &abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	for _, c := range []struct {
		handler string
		reason  abi.Reason
	}{{"create_fn", abi.ReasonCreate}, {"update_fn", abi.ReasonUpdate}, {"delete_fn", abi.ReasonDelete}} {
		b.Run(c.handler, func(b *testing.B) {
			req := &abi.Request{Handler: c.handler, Kind: abi.HandlerKind(c.reason), Reason: c.reason, Resource: ref,
				Body: body, Name: "kex-00000", Namespace: "bench", UID: "9db77631-8320-42eb-b970-7fadd031f248",
				New: json.RawMessage(`{"spec":{"field":"value-1"}}`), Started: time.Unix(1700000000, 0).UTC()}
			if c.reason == abi.ReasonUpdate {
				req.Old = json.RawMessage(`{"spec":{"field":"value-0"}}`)
				req.Diff = []abi.DiffItem{{Op: abi.DiffChange, Field: []string{"spec", "field"},
					Old: json.RawMessage(`"value-0"`), New: json.RawMessage(`"value-1"`)}}
			}
			benchmarkCalls(b, m, req)
		})
	}
}
