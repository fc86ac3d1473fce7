package spawning_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// BenchmarkWaitingTimers measures what timers cost while they wait between
// runs: 2,000 objects with a 60 s timer each on a fake clock, after their
// first run. It reports the memory they hold (goroutine stacks and live
// heap, after a GC) and the goroutines, per timer.
//
//	go test -run '^$' -bench WaitingTimers -benchtime 5x ./host/internal/engines/spawning/
func BenchmarkWaitingTimers(b *testing.B) {
	const n = 2000
	var bytes, goroutines float64
	for range b.N {
		f := newFixtureWith(b, ok, func(o *spawning.Options) { o.Wake = (&wakes{}).wake })
		h := handler(b, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 60}})
		g0, m0 := held()
		for i := range n {
			k := key
			k.Name = fmt.Sprintf("ex-%d", i)
			f.spawner.Adjust(context.Background(), k, body(), []*registry.Handler{h}, true)
		}
		for f.mod.calls.Load() < n || f.clock.Waiters() < n {
			time.Sleep(time.Millisecond)
		}
		g1, m1 := held()
		bytes += float64(m1-m0) / n
		goroutines += float64(g1-g0) / n
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f.spawner.Shutdown(ctx)
		cancel()
	}
	b.ReportMetric(bytes/float64(b.N), "B/timer")
	b.ReportMetric(goroutines/float64(b.N), "goroutines/timer")
}

// held is the goroutines and the bytes of stacks and live heap, after a
// GC.
func held() (int, int64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), int64(m.StackInuse + m.HeapAlloc)
}
