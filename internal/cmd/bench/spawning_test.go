package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i) // 100..1, unsorted
	}
	s := summarize(xs)
	if s.P50 != 50 || s.P90 != 90 || s.P99 != 99 || s.Max != 100 || s.Mean != 50.5 {
		t.Errorf("summarize(1..100) = %+v", s)
	}
	if got := percentile([]float64{7}, 99); got != 7 {
		t.Errorf("percentile of one = %v", got)
	}
	if got := percentile([]float64{1, 2, 3}, 0); got != 1 {
		t.Errorf("p0 = %v, want the smallest", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of none = %v", got)
	}
	if got := summarize(nil); got != (summary{}) {
		t.Errorf("summarize(nil) = %+v", got)
	}
}

func TestParseTimerLogAndWindow(t *testing.T) {
	base := time.Unix(1000, 0)
	log := "1000000000000 1500000 2000000\n\n" + // at the window's start: in
		"1000500000000 -100 3000000\n" + // early (negative lateness)
		"1001000000000 9000000 1000000\n" + // at its end: out
		"999999999999 5 5\n" // before: out
	runs, err := parseTimerLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 || !runs[0].Start.Equal(base) || runs[0].Lateness != 1500*time.Microsecond || runs[1].Lateness != -100 {
		t.Fatalf("runs = %+v", runs)
	}
	n, late, took := windowRuns(runs, base, base.Add(time.Second))
	if n != 2 || late.Max != 1.5 || late.P50 != -0.0001 || took.Max != 3 {
		t.Errorf("window: n=%d lateness=%+v took=%+v", n, late, took)
	}
	for _, bad := range []string{"1 2\n", "1 2 x\n"} {
		if _, err := parseTimerLog(strings.NewReader(bad)); err == nil {
			t.Errorf("parseTimerLog(%q) did not fail", bad)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want int64
	}{{nil, 0}, {[]int64{5}, 5}, {[]int64{9, 1, 5}, 5}, {[]int64{4, 1, 3, 2}, 2}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestParseSpawning(t *testing.T) {
	o, err := parseSpawning(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Timers != 1000 || o.Daemons != 100 || o.Window != time.Minute || o.TimerMode != "timer" {
		t.Errorf("defaults = %+v", o)
	}
	o, err = parseSpawning([]string{"-timers", "0", "-daemons", "10", "-timer-mode", "count"}, io.Discard)
	if err != nil || o.Timers != 0 || o.Daemons != 10 || o.TimerMode != "count" {
		t.Errorf("parse = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-timer-mode", "x"}, {"-timers", "-1"}, {"extra"}, {"-samples", "0"}} {
		if _, err := parseSpawning(bad, io.Discard); err == nil {
			t.Errorf("parseSpawning(%q) did not fail", bad)
		}
	}
}

func TestLinearMemories(t *testing.T) {
	smaps := `7f0000000000-7f0008000000 rw-p 00000000 00:00 0 
Size:             131072 kB
KernelPageSize:        4 kB
Rss:                2816 kB
Pss:                2816 kB
VmFlags: rd wr mr mw me nr sd
7f0008000000-7f000c000000 rw-p 00000000 00:00 0 
Size:              65536 kB
Rss:                1024 kB
VmFlags: rd wr mr mw me nr
c000000000-c004400000 rw-p 00000000 00:00 0 
Size:              69632 kB
Rss:               50000 kB
VmFlags: rd wr mr mw me ac sd
7ffd1000-7ffd2000 r-xp 00000000 00:00 0                          [vdso]
Size:                  4 kB
Rss:                   4 kB
VmFlags: rd ex mr mw me de sd
`
	m, err := linearMemories(strings.NewReader(smaps))
	if err != nil {
		t.Fatal(err)
	}
	if m.Mappings != 2 || m.RSSMB != 3.75 {
		t.Errorf("linearMemories = %+v, want 2 mappings holding 3.75 MiB", m)
	}
}
