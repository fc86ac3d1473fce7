package main

// The "spawning" subcommand measures timers and daemons (issue 6):
//
//	go run ./internal/cmd/bench spawning -timers 1000 -window 60s -daemons 100
//
// It starts one local control plane and, for each part, a fresh namespace
// and a fresh operator process (host/internal/cmd/benchoperator with the
// module examples/testguests/spawnbench):
//
//   - timers: creates N KopfExamples labelled mode=timer (a 1 s timer that
//     returns nothing; -timer-mode count stores a count instead, one patch
//     per run), waits a warm-up, then for a window reads the lateness of
//     every run that started in it (the operator writes one line per run
//     with -timer-log: actual start − when the run was due) and the
//     operator's CPU time and RSS;
//   - daemons: measures the operator's RSS with no object, creates N
//     objects labelled mode=sleep (a daemon that marks itself started and
//     sleeps until stopped), waits until every daemon has started and the
//     settle time has passed, measures again, then deletes the objects and
//     measures once more. Memory per daemon is the growth divided by N.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// spawningCommand is the subcommand's name.
const spawningCommand = "spawning"

// spawningOptions are the subcommand's flags.
type spawningOptions struct {
	Timers    int
	TimerMode string
	Warmup    time.Duration
	Window    time.Duration
	Daemons   int
	Settle    time.Duration
	Samples   int
	JSON      bool
	// WasmModule and WasmOperator are a prebuilt spawnbench.wasm and
	// benchoperator; empty builds them into WorkDir.
	WasmModule, WasmOperator string
	WorkDir                  string
	LogLevel                 string
	Timeout                  time.Duration
}

func parseSpawning(args []string, stderr io.Writer) (spawningOptions, error) {
	var o spawningOptions
	fs := flag.NewFlagSet("bench spawning", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.Timers, "timers", 1000, "objects with a 1 s timer (0: skip the timer part)")
	fs.StringVar(&o.TimerMode, "timer-mode", "timer", "timer: returns nothing (no write per run); count: stores a count (one patch per run)")
	fs.DurationVar(&o.Warmup, "warmup", 20*time.Second, "wait after the timers' objects are created before the window")
	fs.DurationVar(&o.Window, "window", 60*time.Second, "the steady-state window whose timer runs are measured")
	fs.IntVar(&o.Daemons, "daemons", 100, "objects with a sleeping daemon (0: skip the daemon part)")
	fs.DurationVar(&o.Settle, "settle", 10*time.Second, "wait before each RSS measurement of the daemon part")
	fs.IntVar(&o.Samples, "samples", 5, "RSS samples, 1 s apart, per measurement (the median is reported)")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of text")
	fs.StringVar(&o.WasmModule, "wasm", "", "prebuilt spawnbench.wasm (default: build it)")
	fs.StringVar(&o.WasmOperator, "wasm-operator", "", "prebuilt host/internal/cmd/benchoperator binary (default: build it)")
	fs.StringVar(&o.WorkDir, "workdir", "", "keep the operators' logs and the timer log here (default: a temporary folder, removed)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "the operator's log level (its log goes to the work folder)")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "longest wait for the operator to start, for objects to be created, daemons to start or objects to go")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.TimerMode != "timer" && o.TimerMode != "count" {
		return o, fmt.Errorf("-timer-mode: want timer or count, got %q", o.TimerMode)
	}
	if o.Timers < 0 || o.Daemons < 0 || o.Samples < 1 || o.Window <= 0 {
		return o, fmt.Errorf("-timers and -daemons must be ≥ 0, -samples ≥ 1, -window > 0")
	}
	return o, nil
}

// timerResult is the timer part's measurements.
type timerResult struct {
	N        int     `json:"n"`
	Mode     string  `json:"mode"`
	Warmup   float64 `json:"warmup_seconds"`
	Window   float64 `json:"window_seconds"`
	Runs     int     `json:"runs"`
	RunsPerS float64 `json:"runs_per_second"`
	// Lateness and Took are in milliseconds.
	Lateness summary `json:"lateness_ms"`
	Took     summary `json:"took_ms"`
	// CPUCores is the operator's CPU time in the window per second of it.
	CPUCores  float64 `json:"cpu_cores"`
	RSSMB     float64 `json:"rss_mb"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
}

// rssMB is one RSS measurement of the operator, MiB: Raw as it is (the
// median of a few samples), Live after the operator returned free memory
// to the OS (SIGUSR2: a GC and debug.FreeOSMemory).
type rssMB struct {
	Raw  float64 `json:"raw"`
	Live float64 `json:"live"`
}

// daemonResult is the daemon part's measurements, RSS in MiB.
type daemonResult struct {
	N       int   `json:"n"`
	Before  rssMB `json:"rss_before_mb"`
	Running rssMB `json:"rss_running_mb"`
	After   rssMB `json:"rss_after_mb"`
	// PerDaemon is (Running − Before) / N.
	PerDaemon    rssMB   `json:"per_daemon_mb"`
	PeakRSSMB    float64 `json:"peak_rss_mb"`
	StartSeconds float64 `json:"start_seconds"` // until every daemon marked itself started
	// Memories are the wasm linear memories with N running (live), as
	// told by /proc/<pid>/smaps: see linearMemories.
	Memories memories `json:"linear_memories"`
}

// memories sums the mappings that hold guests' linear memories.
type memories struct {
	Mappings int     `json:"mappings"`
	RSSMB    float64 `json:"rss_mb"`
}

// linearMemories finds the guests' linear memories in a /proc/<pid>/smaps:
// wasmrt maps each at its maximum size with MAP_NORESERVE (VmFlags "nr"),
// which neither the Go runtime nor wazero's code mappings use. Adjacent
// memories may merge into one mapping, so Mappings is not a count of
// memories. A heuristic for a breakdown, not what the target rests on.
func linearMemories(smaps io.Reader) (memories, error) {
	var (
		m   memories
		rss int64 // of the current mapping
	)
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(k, " -") { // a mapping's header line
			rss = 0
			continue
		}
		switch k {
		case "Rss":
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				return m, fmt.Errorf("smaps: malformed %q", line)
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return m, fmt.Errorf("smaps: %q: %w", line, err)
			}
			rss = n
		case "VmFlags":
			if slices.Contains(strings.Fields(v), "nr") {
				m.Mappings++
				m.RSSMB += float64(rss) / 1024
			}
		}
	}
	return m, sc.Err()
}

type spawningReport struct {
	Go      string        `json:"go"`
	Server  string        `json:"server"`
	Machine string        `json:"machine"`
	Timers  *timerResult  `json:"timers,omitempty"`
	Daemons *daemonResult `json:"daemons,omitempty"`
}

// summary is a distribution's percentiles.
type summary struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// summarize returns the percentiles of xs (nearest rank); xs is sorted.
func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return summary{P50: percentile(xs, 50), P90: percentile(xs, 90), P99: percentile(xs, 99),
		Max: xs[len(xs)-1], Mean: sum / float64(len(xs))}
}

// percentile is the nearest-rank p-th percentile of sorted xs.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// timerRun is one line of the operator's timer log.
type timerRun struct {
	Start          time.Time
	Lateness, Took time.Duration
}

// parseTimerLog reads the lines "start lateness took" (Unix ns, ns, ns).
func parseTimerLog(r io.Reader) ([]timerRun, error) {
	var out []timerRun
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("timer log line %d: want 3 fields, got %q", line, sc.Text())
		}
		var n [3]int64
		for i, s := range f {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("timer log line %d: %w", line, err)
			}
			n[i] = v
		}
		out = append(out, timerRun{Start: time.Unix(0, n[0]), Lateness: time.Duration(n[1]), Took: time.Duration(n[2])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the timer log: %w", err)
	}
	return out, nil
}

// windowRuns summarizes the runs that started in [from, to).
func windowRuns(runs []timerRun, from, to time.Time) (n int, lateness, took summary) {
	var late, dur []float64
	for _, r := range runs {
		if r.Start.Before(from) || !r.Start.Before(to) {
			continue
		}
		late = append(late, float64(r.Lateness)/float64(time.Millisecond))
		dur = append(dur, float64(r.Took)/float64(time.Millisecond))
	}
	return len(late), summarize(late), summarize(dur)
}

// median of a few samples.
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// runSpawning is the subcommand.
func runSpawning(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseSpawning(args, stderr)
	if err != nil {
		return err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	cleanup, err := workFolder(&o.WorkDir, "kopf-wasm-bench-spawning-")
	if err != nil {
		return err
	}
	defer cleanup()
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench spawning: "+format+"\n", a...) }
	if err := o.build(ctx, root, progress); err != nil {
		return err
	}
	progress("starting the control plane")
	env, err := testenv.New(ctx, testenv.Options{
		CRDPaths:       []string{filepath.Join(root, "examples", "crd.yaml")},
		KubeconfigPath: filepath.Join(o.WorkDir, "kubeconfig"),
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			progress("%v", err)
		}
	}()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1
	cfg.UserAgent = driverAgent
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("driver client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("driver client: %w", err)
	}
	s := &spawningBench{o: o, kubeconfig: env.Kubeconfig, dyn: dyn, cs: cs, progress: progress}
	rep := spawningReport{Go: runtime.Version(), Server: "unknown", Machine: machine()}
	if v, err := cs.Discovery().ServerVersion(); err == nil {
		rep.Server = "kube-apiserver " + v.GitVersion
	}
	if o.Timers > 0 {
		if rep.Timers, err = s.timers(ctx); err != nil {
			return fmt.Errorf("timers: %w", err)
		}
	}
	if o.Daemons > 0 {
		if rep.Daemons, err = s.daemons(ctx); err != nil {
			return fmt.Errorf("daemons: %w", err)
		}
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.text(stdout)
	return nil
}

// build builds the spawnbench module and the operator unless given.
func (o *spawningOptions) build(ctx context.Context, root string, progress func(string, ...any)) error {
	return buildOperator(ctx, root, o.WorkDir, "testguests/spawnbench", &o.WasmModule, &o.WasmOperator, progress)
}

// spawningBench runs the parts on one control plane.
type spawningBench struct {
	o          spawningOptions
	kubeconfig string
	dyn        dynamic.Interface
	cs         kubernetes.Interface
	progress   func(string, ...any)
}

// start creates a namespace and starts an operator watching it.
func (s *spawningBench) start(ctx context.Context, part string, extra ...string) (dynamic.ResourceInterface, *child, error) {
	ns := fmt.Sprintf("bench-%s-%d", part, time.Now().Unix())
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	argv := append([]string{s.o.WasmOperator, "-kubeconfig", s.kubeconfig, "-namespace", ns, "-log-level", s.o.LogLevel,
		"-wasm", s.o.WasmModule, "-user-agent", "kopf-wasm-bench"}, extra...)
	c, err := startChild(argv, filepath.Join(s.o.WorkDir, part+".log"))
	if err != nil {
		return nil, nil, err
	}
	if err := c.waitReady(s.o.Timeout); err != nil {
		_, _ = c.stop(10 * time.Second)
		return nil, nil, err
	}
	return s.dyn.Resource(kopfExamples).Namespace(ns), c, nil
}

// create makes n objects labelled mode, 16 at a time.
func (s *spawningBench) create(ctx context.Context, res dynamic.ResourceInterface, n int, mode string) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				obj := example(objectName(i), "value-1")
				obj.SetLabels(map[string]string{"mode": mode})
				if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					errOnce.Do(func() { first = fmt.Errorf("creating %s: %w", objectName(i), err); cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// until polls the objects every second until ok(objects) holds.
func (s *spawningBench) until(ctx context.Context, res dynamic.ResourceInterface, c *child, what string, ok func([]unstructured.Unstructured) bool) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	for {
		list, err := res.List(ctx, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("waiting until %s: %w", what, err)
		}
		if list != nil && ok(list.Items) {
			return nil
		}
		if err := c.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting until %s: %w", what, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// measure is the operator's RSS, raw and then live (see rssMB).
func (s *spawningBench) measure(c *child) (rssMB, error) {
	pid := c.cmd.Process.Pid
	raw, err := s.rss(pid)
	if err != nil {
		return rssMB{}, err
	}
	if err := c.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		return rssMB{}, fmt.Errorf("asking the operator to free memory: %w", err)
	}
	time.Sleep(time.Second)
	live, err := s.rss(pid)
	if err != nil {
		return rssMB{}, err
	}
	return rssMB{Raw: float64(raw) / 1024, Live: float64(live) / 1024}, nil
}

// rss is the median VmRSS, KiB, of s.o.Samples samples 1 s apart.
func (s *spawningBench) rss(pid int) (int64, error) {
	var xs []int64
	for i := range s.o.Samples {
		if i > 0 {
			time.Sleep(time.Second)
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, fmt.Errorf("operator RSS: %w", err)
		}
		v, err := parseStatusKB(string(data), "VmRSS")
		if err != nil {
			return 0, err
		}
		xs = append(xs, v)
	}
	return median(xs), nil
}

func (s *spawningBench) timers(ctx context.Context) (*timerResult, error) {
	o := s.o
	logPath := filepath.Join(o.WorkDir, "timers.runs")
	res, c, err := s.start(ctx, "timers", "-timer-log", logPath)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = c.stop(10 * time.Second)
		}
	}()
	s.progress("timers: creating %d objects with a 1 s timer (mode %s)", o.Timers, o.TimerMode)
	if err := s.create(ctx, res, o.Timers, o.TimerMode); err != nil {
		return nil, err
	}
	s.progress("timers: warm-up %s, then a window of %s", o.Warmup, o.Window)
	time.Sleep(o.Warmup)
	pid := c.cmd.Process.Pid
	from := time.Now()
	cpu0, err := procCPU(pid)
	if err != nil {
		return nil, err
	}
	time.Sleep(o.Window)
	cpu1, err := procCPU(pid)
	to := time.Now()
	if err != nil {
		return nil, err
	}
	if err := c.alive(); err != nil {
		return nil, err
	}
	rssK, err := s.rss(pid)
	if err != nil {
		return nil, err
	}
	stopped = true
	u, err := c.stop(60 * time.Second)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(logPath)
	if err != nil {
		return nil, fmt.Errorf("the timer log: %w", err)
	}
	runs, err := parseTimerLog(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	r := &timerResult{N: o.Timers, Mode: o.TimerMode, Warmup: o.Warmup.Seconds(), Window: to.Sub(from).Seconds(),
		CPUCores: (cpu1 - cpu0).Seconds() / to.Sub(from).Seconds(),
		RSSMB:    float64(rssK) / 1024, PeakRSSMB: float64(u.PeakRSSK) / 1024}
	r.Runs, r.Lateness, r.Took = windowRuns(runs, from, to)
	r.RunsPerS = float64(r.Runs) / r.Window
	s.progress("timers: %d runs in the window (%.1f/s), lateness p50 %.2f ms, p99 %.2f ms", r.Runs, r.RunsPerS, r.Lateness.P50, r.Lateness.P99)
	return r, nil
}

func (s *spawningBench) daemons(ctx context.Context) (*daemonResult, error) {
	o := s.o
	res, c, err := s.start(ctx, "daemons")
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = c.stop(10 * time.Second)
		}
	}()
	r := &daemonResult{N: o.Daemons}
	s.progress("daemons: settling %s with no object", o.Settle)
	time.Sleep(o.Settle)
	if r.Before, err = s.measure(c); err != nil {
		return nil, err
	}
	s.progress("daemons: RSS %.1f MiB (live %.1f); creating %d objects with a sleeping daemon", r.Before.Raw, r.Before.Live, o.Daemons)
	begin := time.Now()
	if err := s.create(ctx, res, o.Daemons, "sleep"); err != nil {
		return nil, err
	}
	err = s.until(ctx, res, c, "every daemon started", func(items []unstructured.Unstructured) bool {
		n := 0
		for _, it := range items {
			if ok, _, _ := unstructured.NestedBool(it.Object, "status", "sleep", "started"); ok {
				n++
			}
		}
		return n >= o.Daemons
	})
	if err != nil {
		return nil, err
	}
	r.StartSeconds = time.Since(begin).Seconds()
	s.progress("daemons: all %d started in %.1fs; settling %s", o.Daemons, r.StartSeconds, o.Settle)
	time.Sleep(o.Settle)
	if r.Running, err = s.measure(c); err != nil {
		return nil, err
	}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", c.cmd.Process.Pid)); err == nil {
		r.Memories, err = linearMemories(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	s.progress("daemons: RSS %.1f MiB (live %.1f); deleting the objects", r.Running.Raw, r.Running.Live)
	if err := res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return nil, fmt.Errorf("deleting the objects: %w", err)
	}
	if err := s.until(ctx, res, c, "every object is gone", func(items []unstructured.Unstructured) bool { return len(items) == 0 }); err != nil {
		return nil, err
	}
	time.Sleep(o.Settle)
	if r.After, err = s.measure(c); err != nil {
		return nil, err
	}
	stopped = true
	u, err := c.stop(60 * time.Second)
	if err != nil {
		return nil, err
	}
	n := float64(o.Daemons)
	r.PerDaemon = rssMB{Raw: (r.Running.Raw - r.Before.Raw) / n, Live: (r.Running.Live - r.Before.Live) / n}
	r.PeakRSSMB = float64(u.PeakRSSK) / 1024
	return r, nil
}

// text prints the report.
func (r spawningReport) text(w io.Writer) {
	fmt.Fprintf(w, "%s; %s; %s\n", r.Machine, r.Go, r.Server)
	if t := r.Timers; t != nil {
		fmt.Fprintf(w, "\nTimers: %d objects with a 1 s timer (mode %s); warm-up %.0fs, window %.1fs\n", t.N, t.Mode, t.Warmup, t.Window)
		fmt.Fprintf(w, "  runs in the window: %d (%.1f/s, want %d/s)\n", t.Runs, t.RunsPerS, t.N)
		fmt.Fprintf(w, "  %-18s %9s %9s %9s %9s %9s\n", "", "p50", "p90", "p99", "max", "mean")
		for _, row := range []struct {
			label string
			s     summary
		}{{"lateness (ms)", t.Lateness}, {"run took (ms)", t.Took}} {
			fmt.Fprintf(w, "  %-18s %9.2f %9.2f %9.2f %9.2f %9.2f\n", row.label, row.s.P50, row.s.P90, row.s.P99, row.s.Max, row.s.Mean)
		}
		fmt.Fprintf(w, "  operator CPU %.3f cores (%.1f%% of one core); RSS %.1f MiB at the window's end, peak %.1f MiB\n",
			t.CPUCores, 100*t.CPUCores, t.RSSMB, t.PeakRSSMB)
	}
	if d := r.Daemons; d != nil {
		fmt.Fprintf(w, "\nDaemons: %d objects with a sleeping daemon (all started in %.1fs)\n", d.N, d.StartSeconds)
		fmt.Fprintf(w, "  %-22s %12s %12s %14s %16s\n", "RSS (MiB)", "no object", fmt.Sprintf("%d running", d.N), "after deletion", "per daemon")
		for _, row := range []struct {
			label string
			pick  func(rssMB) float64
		}{{"raw", func(m rssMB) float64 { return m.Raw }}, {"live (after a GC)", func(m rssMB) float64 { return m.Live }}} {
			per := row.pick(d.PerDaemon)
			fmt.Fprintf(w, "  %-22s %12.1f %12.1f %14.1f %9.2f (%s)\n", row.label, row.pick(d.Before), row.pick(d.Running), row.pick(d.After),
				per, yesNo(per*1.048576 <= 6))
		}
		fmt.Fprintf(w, "  target ≤ 6 MB per running daemon; the operator's peak RSS %.1f MiB\n", d.PeakRSSMB)
		if m := d.Memories; m.Mappings > 0 {
			fmt.Fprintf(w, "  with %d running (live): the wasm linear memories hold %.1f MiB (%d mappings), the rest %.1f MiB\n",
				d.N, m.RSSMB, m.Mappings, d.Running.Live-m.RSSMB)
		}
	}
}
