package wasmrt

import (
	"context"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// BenchmarkSwapOverlap measures the extra memory while two versions of a
// module overlap during a hot swap: v1 serves with one warm instance, then
// v2 (another 4 MB standard-Go module) is loaded from the compilation cache
// and serves one call, before v1 is closed. The compilation cache is warm
// for both, as for a swap of a module built before.
func BenchmarkSwapOverlap(b *testing.B) {
	v1, v2 := wasmtest.Bytes(b, "testguests/reloadv1"), wasmtest.Bytes(b, "testguests/reloadv2")
	ctx := context.Background()
	warm := newRuntime(b, Options{Logger: discardLogger()})
	for _, code := range [][]byte{v1, v2} {
		m, err := warm.Load(ctx, "reload", code)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	for range b.N {
		r := newRuntime(b, Options{Logger: discardLogger()})
		old, err := r.Load(ctx, "reload", v1)
		if err != nil {
			b.Fatal(err)
		}
		rss0, heap0 := memoryNow(b)
		next, err := r.Load(ctx, "reload", v2)
		if err != nil {
			b.Fatal(err)
		}
		rss1, heap1 := memoryNow(b)
		b.ReportMetric(float64(rss1-rss0)/(1<<20), "overlap-RSS-MiB")
		b.ReportMetric(float64(heap1-heap0)/(1<<20), "overlap-heap-MiB")
		old.Close()
		next.Close()
		_ = r.Close(ctx)
	}
}
