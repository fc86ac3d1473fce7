package main

import (
	"os/exec"
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

func TestParseMachineBusy(t *testing.T) {
	tests := []struct {
		line    string
		want    time.Duration
		wantErr bool
	}{
		// user 100, nice 5, system 50, idle 900, iowait 20, irq 1, softirq 4, steal 0
		{"cpu  100 5 50 900 20 1 4 0 0 0", 160 * clockTick, false},
		{"cpu0 100 5 50 900 20 1 4 0 0 0", 0, true},
		{"cpu  100 5", 0, true},
		{"cpu  100 x 50 900 20 1 4 0", 0, true},
	}
	for _, tt := range tests {
		got, err := parseMachineBusy(tt.line)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseMachineBusy(%q) = %v, %v; want %v (error: %v)", tt.line, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseStatParent(t *testing.T) {
	tests := []struct {
		stat     string
		comm     string
		ppid     int
		okResult bool
	}{
		{"4242 (etcd) S 17 4242 17 0 -1", "etcd", 17, true},
		{"4243 (a (b) c) R 1 4243", "a (b) c", 1, true},
		{"4244 (x) R", "", 0, false},
		{"garbage", "", 0, false},
	}
	for _, tt := range tests {
		comm, ppid, ok := parseStatParent(tt.stat)
		if ok != tt.okResult || (ok && (comm != tt.comm || ppid != tt.ppid)) {
			t.Errorf("parseStatParent(%q) = %q, %d, %v; want %q, %d, %v", tt.stat, comm, ppid, ok, tt.comm, tt.ppid, tt.okResult)
		}
	}
}

func TestChildNamed(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid, err := childNamed("sleep")
	if err != nil || pid != cmd.Process.Pid {
		t.Errorf("childNamed(sleep) = %d, %v; want %d", pid, err, cmd.Process.Pid)
	}
	if _, err := childNamed("no-such-child"); err == nil {
		t.Error("childNamed found a child that does not exist")
	}
}
