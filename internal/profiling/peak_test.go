package profiling

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPeakSnapshots: a process whose RSS grows gets smaps and the
// runtime's memory classes written at its peak, and a heap profile when
// the snapshots stop.
func TestPeakSnapshots(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps")
	}
	dir := t.TempDir()
	stop, err := PeakSnapshots(dir, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ballast := make([]byte, 32<<20)
	for i := range ballast {
		ballast[i] = 1 // resident
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "runtime.txt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot within a minute of a 32 MiB growth")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	runtimeTxt, err := os.ReadFile(filepath.Join(dir, "runtime.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(runtimeTxt), "VmRSS ") || !strings.Contains(string(runtimeTxt), "/memory/classes/heap/objects:bytes") ||
		!strings.Contains(string(runtimeTxt), "/sched/goroutines:goroutines ") || !strings.Contains(string(runtimeTxt), "\nheap-address 0x") {
		t.Errorf("runtime.txt:\n%s", runtimeTxt)
	}
	for _, name := range []string{"smaps", "heap.pprof"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	_ = ballast[len(ballast)-1]
}
