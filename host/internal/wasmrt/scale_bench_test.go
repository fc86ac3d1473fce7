package wasmrt

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// BenchmarkKopfExampleScale calls kopfexample's create_fn as the reactor
// does in the kopfexamples benchmark at N=10,000, step by step further from
// BenchmarkKopfExample's single warm instance and single object:
//
//   - one: one object, calls one after the other (BenchmarkKopfExample);
//   - objects: a different object (name, uid, resourceVersion, spec) in
//     every call, as 10,000 objects are;
//   - parallel: also 16 callers (the reactor's workers) sharing the pool
//     (2 instances on 2 CPUs), so calls alternate between instances;
//   - evict: also, between two calls, each caller walks 4 MiB of its own
//     memory, as the host's watch decoding, caches and HTTP do between two
//     handler calls: the guest's code and data are no longer in the CPU's
//     caches when it is called.
//
// evict-pool1 repeats evict with one instance (every call on the same
// linear memory); evict-gogcN with the guests' GOGC set to N.
// Besides ns/op it reports cpu-µs/op, the process's CPU time per call
// (in the evict cases including the walk), and MiB/instance, the linear
// memory of an instance at the end. The guest's own time is what a CPU
// profile (-cpuprofile) puts in runtime._ExternalCode, divided by the
// calls (b.N plus 100 warm-up calls), as for the operator's profile.
func BenchmarkKopfExampleScale(b *testing.B) {
	wasm := wasmtest.Bytes(b, "kopfexample")
	cases := []struct {
		name     string
		objects  int
		parallel bool
		evict    int
		gogc     int
		pool     int
	}{
		{"one", 1, false, 0, 0, 0},
		{"objects", 10000, false, 0, 0, 0},
		{"parallel", 10000, true, 0, 0, 0},
		{"evict", 10000, true, 4 << 20, 0, 0},
		{"evict-pool1", 10000, true, 4 << 20, 0, 1},
		{"evict-gogc100", 10000, true, 4 << 20, 100, 0},
		{"evict-gogc200", 10000, true, 4 << 20, 200, 0},
		{"evict-gogc400", 10000, true, 4 << 20, 400, 0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := newRuntime(b, Options{Logger: discardLogger(), GuestGOGC: c.gogc, PoolSize: c.pool})
			m, err := r.Load(context.Background(), "kopfexample", wasm)
			if err != nil {
				b.Fatal(err)
			}
			reqs := make([]*abi.Request, c.objects)
			for i := range reqs {
				reqs[i] = kopfExampleRequest(i)
			}
			benchmarkScaleCalls(b, m, reqs, c.parallel, c.evict)
			b.ReportMetric(float64(m.Stats().MemoryBytes)/float64(m.Stats().Live)/(1<<20), "MiB/instance")
		})
	}
}

func benchmarkScaleCalls(b *testing.B, m *Module, reqs []*abi.Request, parallel bool, evict int) {
	ctx := context.Background()
	for _, req := range reqs[:min(len(reqs), 100)] { // every instance made and warm
		if _, err := m.Handle(ctx, req, nil); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Uint64
	call := func(scratch []byte) {
		i := next.Add(1)
		if _, err := m.Handle(ctx, reqs[i%uint64(len(reqs))], nil); err != nil {
			b.Error(err)
		}
		for j := 0; j < len(scratch); j += 64 {
			scratch[j]++
		}
	}
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	if parallel {
		b.SetParallelism(8) // 16 callers on 2 CPUs
		b.RunParallel(func(pb *testing.PB) {
			scratch := make([]byte, evict)
			for pb.Next() {
				call(scratch)
			}
		})
	} else {
		scratch := make([]byte, evict)
		for range b.N {
			call(scratch)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// kopfExampleRequest is create_fn's request for the i-th object of the
// kopfexamples benchmark, as the reactor sends it (managed fields stripped
// by the informer, the host's default).
func kopfExampleRequest(i int) *abi.Request {
	name := fmt.Sprintf("kex-%05d", i)
	uid := fmt.Sprintf("%08x-8320-42eb-b970-%012x", i*7919, i*104729)
	field := fmt.Sprintf("value-%d", i)
	body := fmt.Appendf(nil, `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"creationTimestamp":"2026-11-22T11:22:59Z",`+
		`"finalizers":["kopf.zalando.org/KopfFinalizerMarker"],"generation":1,"name":%q,"namespace":"bench-kopf-wasm-1-1795508648",`+
		`"resourceVersion":"%d","uid":%q},"spec":{"field":%q}}`, name, 100000+i, uid, field)
	return &abi.Request{Handler: "create_fn", Kind: abi.KindCreate, Reason: abi.ReasonCreate,
		Resource: &abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
		Body:     body, Name: name, Namespace: "bench-kopf-wasm-1-1795508648", UID: uid,
		New:     json.RawMessage(fmt.Sprintf(`{"spec":{"field":%q}}`, field)),
		Started: time.Unix(1700000000, 0).UTC()}
}
