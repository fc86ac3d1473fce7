package wasmrt

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// BenchmarkModules measures what loaded modules cost a host before any
// call, as a host that serves several pays it: in one runtime with a warm
// compilation cache (a host's later starts), the modules are loaded one
// after the other, each with its first instance (the one that read its
// manifest), and the growth of VmRSS and of the heap in use after a GC is
// divided by their number. codes is how many compiled codes they needed.
// shmem is the growth of the system's shared memory (/proc/meminfo's
// Shmem): the modules' images (image.go), whole, which VmRSS counts only
// where an instance touched them.
//
//   - <lang>: the kopfexample module of each guest language, alone;
//   - python-4: the four Python examples (kopfexample, children,
//     ephemeral, allkinds), which are snapshots of one runtime.
func BenchmarkModules(b *testing.B) {
	sets := map[string][][]byte{}
	for _, mod := range langModules(b) {
		sets[mod.lang] = [][]byte{mod.wasm}
	}
	for _, name := range []string{"kopfexample", "children", "ephemeral", "allkinds"} {
		sets["python-4"] = append(sets["python-4"], guestwasm.Bytes(b, guestwasm.Python, name))
	}
	for _, name := range []string{"go", "tinygo", "rust", "assemblyscript", "python", "python-4"} {
		b.Run(name, func(b *testing.B) { benchModules(b, sets[name]) })
	}
}

func benchModules(b *testing.B, wasms [][]byte) {
	ctx := context.Background()
	dir := b.TempDir()
	warm := newRuntime(b, Options{CacheDir: dir, Logger: discardLogger()})
	for _, wasm := range wasms {
		if _, err := warm.Load(ctx, "warm", wasm); err != nil {
			b.Fatal(err)
		}
	}
	_ = warm.Close(ctx)
	var rss, heap, shmem float64
	var codes int
	for range b.N {
		r := newRuntime(b, Options{CacheDir: dir, Logger: discardLogger()})
		rss0, heap0 := memoryNow(b)
		shmem0 := shmemNow(b)
		for i, wasm := range wasms {
			if _, err := r.Load(ctx, string(rune('a'+i)), wasm); err != nil {
				b.Fatal(err)
			}
		}
		rss1, heap1 := memoryNow(b)
		shmem += float64(shmemNow(b)) - float64(shmem0)
		rss += float64(rss1) - float64(rss0)
		heap += float64(heap1) - float64(heap0)
		r.mu.Lock()
		codes = len(r.compiled)
		r.mu.Unlock()
		_ = r.Close(ctx)
	}
	n := float64(b.N * len(wasms))
	b.ReportMetric(rss/n/(1<<20), "RSS-MiB/module")
	b.ReportMetric(heap/n/(1<<20), "heap-MiB/module")
	b.ReportMetric(shmem/n/(1<<20), "shmem-MiB/module")
	b.ReportMetric(float64(codes), "codes")
}

// shmemNow returns the system's shared memory in bytes (/proc/meminfo).
func shmemNow(b *testing.B) uint64 {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		b.Skip("no /proc/meminfo on this system: ", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "Shmem:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no Shmem in /proc/meminfo")
	return 0
}
