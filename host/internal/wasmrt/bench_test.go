package wasmrt

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkHandle measures one call of a trivial handler ("ok": decode the
// request, return a small result) through the whole path: pool, request
// encoding, Extism input copy, the guest, output copy, response decoding.
// It reports the p50 and p99 of the calls in µs beside the mean (ns/op).
func BenchmarkHandle(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			r := newRuntime(b, Options{Logger: discardLogger()})
			m := load(b, r, "good")
			req := request("ok", size)
			ctx := context.Background()
			if _, err := m.Handle(ctx, req, nil); err != nil { // warm the instance
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.SetBytes(int64(len(req.Body)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := m.Handle(ctx, req, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MB"
	}
	return strconv.Itoa(n>>10) + "KB"
}

var _ = fmt.Sprint
var _ = os.Getpid
var _ = runtime.GC
var _ = strings.Cut
