package main

import (
	"path/filepath"
	"testing"
	"time"
)

// TestChildPeakRSS shows that a child's peak RSS is its own, not the
// benchmark's: with 256 MiB touched in this process, a sleeping child
// reports a few MiB (ru_maxrss from wait4 would say over 256).
func TestChildPeakRSS(t *testing.T) {
	held := make([]byte, 256<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	c, err := startChild([]string{"sleep", "30"}, filepath.Join(t.TempDir(), "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.stop(10 * time.Second)
	if err == nil {
		t.Fatal("stop of a process that SIGTERM kills: no error; want the unclean exit reported")
	}
	if u.PeakRSSK <= 0 || u.PeakRSSK > 64<<10 {
		t.Errorf("peak RSS of sleep = %d KiB; want its own few MiB, not this process's %d MiB", u.PeakRSSK, len(held)>>20)
	}
	held[0] = 2 // keep it touched until the child was measured
}
