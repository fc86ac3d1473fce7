package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// child is an operator process.
type child struct {
	cmd    *exec.Cmd
	log    *os.File
	ready  chan struct{}
	exited chan struct{}
	err    error // the result of Wait, once exited is closed
	// synced closes when the child prints "synced"; cycles is the last
	// "cycles N" it printed (operators run with -report-progress).
	synced chan struct{}
	cycles atomic.Int64
}

// startChild starts argv with stderr going to logPath; the child is ready
// when it prints "ready" on stdout.
func startChild(argv []string, logPath string) (*child, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("operator log: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	c := &child{cmd: cmd, log: log, ready: make(chan struct{}), exited: make(chan struct{}), synced: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		var ready, synced once
		for sc.Scan() {
			c.line(strings.TrimSpace(sc.Text()), &ready, &synced)
		}
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// once closes a channel the first time.
type once bool

func (o *once) close(ch chan struct{}) {
	if !*o {
		close(ch)
		*o = true
	}
}

// line takes in one line of the child's stdout.
func (c *child) line(text string, ready, synced *once) {
	switch {
	case text == "ready":
		ready.close(c.ready)
	case text == "synced":
		synced.close(c.synced)
	case strings.HasPrefix(text, "cycles "):
		if n, err := strconv.ParseInt(strings.TrimPrefix(text, "cycles "), 10, 64); err == nil {
			c.cycles.Store(n)
		}
	}
}

// waitReady waits until the child said it is ready.
func (c *child) waitReady(timeout time.Duration) error {
	select {
	case <-c.ready:
		return nil
	case <-c.exited:
		return fmt.Errorf("the operator exited before it was ready (%v); see %s", c.err, c.log.Name())
	case <-time.After(timeout):
		return fmt.Errorf("the operator was not ready within %s; see %s", timeout, c.log.Name())
	}
}

// alive reports an error when the child has exited.
func (c *child) alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("the operator exited (%v); see %s", c.err, c.log.Name())
	default:
		return nil
	}
}

// usage is what the kernel accounted for an exited child.
type usage struct {
	CPU time.Duration // user + system
	// PeakRSSK is the child's peak resident set in KiB: its VmHWM, read
	// just before it was stopped. Not ru_maxrss from wait4: Go starts
	// children with vfork (CLONE_VM), and exec records the high-water mark
	// of the address space the child shared with its parent until then, so
	// ru_maxrss also counts the benchmark's own RSS at the time of the
	// start (a child of a process holding 200 MB reports 203 MB).
	PeakRSSK int64
}

// stop sends SIGTERM, waits (then kills after timeout) and returns the
// child's resource usage.
func (c *child) stop(timeout time.Duration) (usage, error) {
	defer c.log.Close()
	hwm, hwmErr := procHWM(c.cmd.Process.Pid)
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return usage{}, errors.New("no resource usage for the operator process")
	}
	u := usage{CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), PeakRSSK: hwm}
	if !c.cmd.ProcessState.Success() {
		return u, fmt.Errorf("the operator did not exit cleanly (%v); see %s", c.err, c.log.Name())
	}
	if hwmErr != nil {
		return u, fmt.Errorf("the operator exited before it was stopped: %w", hwmErr)
	}
	return u, nil
}

// clockTick is USER_HZ, the unit of the CPU times in /proc (100 on every
// Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// procCPU returns the CPU time (user + system) a running process has used
// so far, from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("operator CPU time: %w", err)
	}
	return parseStatCPU(string(data))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line.
func parseStatCPU(stat string) (time.Duration, error) {
	_, fields, ok := statFields(stat)
	if !ok {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc stat %q", stat)
	}
	return sumTicks(fields[11:13], nil)
}

// statFields splits a /proc/<pid>/stat line into the command name (field
// 2) and the fields after it (fields[0] is field 3, the state). The name
// may hold spaces and parentheses, so it ends at the last ')'.
func statFields(stat string) (comm string, fields []string, ok bool) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	return stat[open+1 : end], strings.Fields(stat[end+1:]), true
}

// sumTicks adds up clock-tick counts, those whose index skip rejects left
// out (nil keeps all).
func sumTicks(counts []string, skip func(int) bool) (time.Duration, error) {
	var ticks int64
	for i, v := range counts {
		if skip != nil && skip(i) {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// machineBusy returns the time all CPUs spent busy since boot: the first
// line of /proc/stat without idle and iowait.
func machineBusy() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return parseMachineBusy(line)
}

// parseMachineBusy reads a "cpu user nice system idle iowait irq softirq
// steal ..." line (in clock ticks); guest times are already in user.
func parseMachineBusy(line string) (time.Duration, error) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	return sumTicks(f[1:9], func(i int) bool { return i == 3 || i == 4 }) // idle, iowait
}

// childNamed returns the pid of a child process of this one by its command
// name (as in /proc/<pid>/stat), such as the control plane's etcd.
func childNamed(comm string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		name, ppid, ok := parseStatParent(string(data))
		if ok && name == comm && ppid == self {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process named %q", comm)
}

// parseStatParent reads the command name (field 2) and the parent's pid
// (field 4) of a /proc/<pid>/stat line.
func parseStatParent(stat string) (comm string, ppid int, ok bool) {
	comm, fields, ok := statFields(stat)
	if !ok || len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return comm, ppid, err == nil
}

// procHWM returns the peak resident set (VmHWM) of a running process, KiB.
func procHWM(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("operator peak RSS: %w", err)
	}
	return parseStatusKB(string(data), "VmHWM")
}

// parseStatusKB returns the value in kB of a field of /proc/<pid>/status.
func parseStatusKB(status, field string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc status: malformed %q", line)
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("/proc status: no %s", field)
}

// liveRSS asks the operator to return free memory to the OS (SIGUSR2: a
// GC and debug.FreeOSMemory, in both contenders) and returns its resident
// set then, KiB.
func (c *child) liveRSS() (int64, error) {
	if err := c.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		return 0, fmt.Errorf("operator live RSS: %w", err)
	}
	time.Sleep(2 * time.Second) // the GC and the release take well under a second
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("operator live RSS: %w", err)
	}
	return parseStatusKB(string(data), "VmRSS")
}
