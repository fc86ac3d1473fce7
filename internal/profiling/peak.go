package profiling

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// heapMarker is the object whose address a snapshot writes: a variable
// of the package, so that it is allocated in the heap.
var heapMarker *[64]byte

// PeakSnapshots watches the process's resident set every interval and,
// whenever it passed its highest so far by at least a MiB, writes into
// dir what holds the memory at that moment: smaps (a copy of
// /proc/self/smaps) and runtime.txt (the Go runtime's memory classes, its
// goroutines and an address in its heap).
// What is left in dir when the process ends is therefore the picture at
// its peak RSS (issue 34: where the host's fixed cost goes). The function
// it returns stops it and writes heap.pprof, the heap profile as of the
// last GC: only then, because writing a profile reads the binary's symbol
// tables, which would add their pages to every later RSS.
func PeakSnapshots(dir string, interval time.Duration) (stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("peak snapshots: %w", err)
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		var highest int64
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			rss := selfRSS()
			if rss < highest+1024 {
				continue
			}
			highest = rss
			snapshot(dir, rss)
		}
	}()
	return func() {
		close(done)
		<-exited
		var heap bytes.Buffer
		if pprof.Lookup("heap").WriteTo(&heap, 0) == nil {
			writeFile(filepath.Join(dir, "heap.pprof"), heap.Bytes())
		}
	}, nil
}

// selfRSS is VmRSS of this process, KiB (0 when unreadable).
func selfRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// snapshot writes smaps and runtime.txt; failures leave the previous ones.
func snapshot(dir string, rss int64) {
	if smaps, err := os.ReadFile("/proc/self/smaps"); err == nil {
		writeFile(filepath.Join(dir, "smaps"), smaps)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "VmRSS %d KiB at %s\n", rss, time.Now().Format(time.RFC3339Nano))
	// An address in the Go heap, which tells its arenas among the
	// mappings (Go 1.26 places them at a random base).
	heapMarker = new([64]byte)
	fmt.Fprintf(&b, "heap-address %#x\n", uintptr(unsafe.Pointer(heapMarker)))
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || strings.HasPrefix(d.Name, "/gc/heap/goal") || d.Name == "/sched/goroutines:goroutines" {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	for _, s := range samples {
		switch {
		case s.Value.Kind() != metrics.KindUint64:
		case strings.HasSuffix(s.Name, ":bytes"):
			fmt.Fprintf(&b, "%s %.1f MiB\n", s.Name, float64(s.Value.Uint64())/(1<<20))
		default:
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		}
	}
	writeFile(filepath.Join(dir, "runtime.txt"), []byte(b.String()))
}

// writeFile replaces path with data at once (a temporary file renamed), so
// that a reader never sees half a snapshot.
func writeFile(path string, data []byte) {
	tmp := path + ".tmp"
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}
