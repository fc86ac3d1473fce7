// Command benchoperator is the kopf-wasm contender of the kopfexamples
// benchmark (internal/cmd/bench): it runs the reactor with one wasm module,
// settings.Default() and one watched namespace, in a process of its own so
// that the benchmark can measure its CPU time and peak RSS. -wasm may name
// several modules, separated by commas (the density benchmark).
//
// It lives under host/ because the reactor is internal to host; the
// benchmark builds and starts it. It prints "ready" on stdout once the
// reactor runs, and stops on SIGINT or SIGTERM. On SIGUSR2 it returns
// free memory to the OS (debug.FreeOSMemory), before an RSS measurement;
// -timer-log records every timer run (the spawning benchmark). Unlike
// `kopf-wasm run`, it loads module files and nothing else.
//
//	benchoperator -kubeconfig KUBECONFIG -namespace NS -wasm kopfexample.wasm
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/profiling"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchoperator:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	kubeconfig, namespace, wasm string
	userAgent, cpuProfile       string
	timerLog                    string
	shards                      bool
	identity                    string
	scrapeEvery                 time.Duration
	metrics                     bool
	logLevel                    slog.Level
	// reportProgress prints "synced" once the operator is ready and
	// "cycles N" whenever its count of processing cycles changed (the
	// cold-start benchmark).
	reportProgress    bool
	keepManagedFields bool
	watchList         bool
	cacheDir          string
	// peakDir receives what holds the memory at the peak RSS
	// (profiling.PeakSnapshots).
	peakDir string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("benchoperator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (required)")
	fs.StringVar(&o.namespace, "namespace", "", "the one namespace to serve (required)")
	fs.StringVar(&o.wasm, "wasm", "", "the module to load, or several separated by commas (required)")
	fs.StringVar(&o.userAgent, "user-agent", settings.Default().Kube.UserAgent, "the HTTP user agent of the Kubernetes client")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file, from SIGUSR1 on")
	fs.StringVar(&o.timerLog, "timer-log", "", "write one line per timer run to this file: start (Unix ns), lateness (ns), duration (ns)")
	fs.BoolVar(&o.shards, "shards", false, "share the objects with the other benchoperators run with -shards (Leases in -namespace)")
	fs.StringVar(&o.identity, "identity", "", "this replica's identity with -shards (default: the host name and pid)")
	fs.DurationVar(&o.scrapeEvery, "scrape-every", 0, "read the Prometheus metrics this often, as a scraper would (0: never)")
	fs.BoolVar(&o.metrics, "metrics", true, "record metrics (false: none, as `kopf-wasm run` without --metrics-bind-address)")
	fs.BoolVar(&o.reportProgress, "report-progress", false,
		`print "synced" on stdout once ready, then "cycles N" (processing cycles so far) whenever N changed`)
	fs.BoolVar(&o.keepManagedFields, "keep-managed-fields", false, "keep metadata.managedFields in the watch cache (settings.Kube.KeepManagedFields)")
	fs.BoolVar(&o.watchList, "watch-list", settings.Default().Watching.WatchList, "stream the initial listings (settings.Watching.WatchList; false: LIST)")
	fs.StringVar(&o.cacheDir, "cache-dir", "", "keep compiled modules in this folder across starts (settings.Wasm.CacheDir; default: compile in memory)")
	fs.StringVar(&o.peakDir, "peak-dir", "", "write a heap profile, smaps and the runtime's memory classes here whenever RSS reaches a new peak")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.kubeconfig == "" || o.namespace == "" || o.wasm == "" {
		return o, errors.New("-kubeconfig, -namespace and -wasm are required")
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("-log-level: %w", err)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		stopProfile, err := profiling.OnSignal(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if o.peakDir != "" {
		stopPeaks, err := profiling.PeakSnapshots(o.peakDir, 200*time.Millisecond)
		if err != nil {
			return err
		}
		defer stopPeaks()
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	slog.SetDefault(log)
	defer profiling.FreeOnSignal()()

	metrics.SetEnabled(o.metrics)
	set := settings.Default()
	cfg, err := kube.LoadConfig(o.kubeconfig, "")
	if err != nil {
		return err
	}
	set.Kube.UserAgent = o.userAgent
	set.Kube.KeepManagedFields = o.keepManagedFields
	set.Watching.WatchList = o.watchList
	set.Wasm.CacheDir = o.cacheDir
	kc, err := kube.New(cfg, kube.Options{Settings: &set, Logger: log})
	if err != nil {
		return err
	}
	wopts := wasmrt.OptionsFor(set.Wasm)
	wopts.Logger = log
	rt, err := wasmrt.New(wopts)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	mods, err := loadModules(ctx, rt, o.wasm)
	if err != nil {
		return err
	}
	namespaces, err := kube.ParseNamespaces(o.namespace)
	if err != nil {
		return err
	}
	ropts := reactor.Options{
		Kube: kc, Modules: mods, Namespaces: namespaces, Settings: set, Logger: log,
	}
	if o.timerLog != "" {
		tl, err := newTimerLog(o.timerLog)
		if err != nil {
			return err
		}
		defer tl.close()
		ropts.ObserveTimer = tl.observe
	}
	var shard *shardedRun
	if o.shards {
		shard = newShardedRun(kc, set, o, log)
		ropts.Owner = shard.owner()
	}
	op, err := reactor.New(ctx, ropts)
	if err != nil {
		return err
	}
	shard.start(op)
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	go scrape(ctx, o.scrapeEvery)
	fmt.Fprintln(stdout, "ready")
	if o.reportProgress {
		go reportProgress(ctx, op, stdout)
	}
	err = <-done
	shard.stop()
	st := op.Stats().Kube
	log.Info("client requests", "reads", st.Reads, "writes", st.Writes, "patches", st.Patches,
		"updates", st.Updates, "creates", st.Creates, "deletes", st.Deletes)
	return err
}

// loadModules loads the comma-separated module files of list, one after
// the other (the density benchmark loads many into one host).
func loadModules(ctx context.Context, rt *wasmrt.Runtime, list string) ([]*wasmrt.Module, error) {
	var mods []*wasmrt.Module
	for _, path := range strings.Split(list, ",") {
		wasm, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the module: %w", err)
		}
		mod, err := rt.Load(ctx, strings.TrimSuffix(filepath.Base(path), ".wasm"), wasm)
		if err != nil {
			return nil, err
		}
		mods = append(mods, mod)
	}
	return mods, nil
}

// reportProgress prints "synced" once op is ready (its initial listing
// delivered) and then "cycles N", the processing cycles so far
// (controller_runtime_reconcile_total over every result), whenever N
// changed, checking every 100 ms until ctx ends.
func reportProgress(ctx context.Context, op *reactor.Operator, stdout io.Writer) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	synced, last := false, -1.0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !synced && op.Ready() == nil {
			synced = true
			fmt.Fprintln(stdout, "synced")
		}
		if n := reconciles(); n != last {
			last = n
			fmt.Fprintf(stdout, "cycles %.0f\n", n)
		}
	}
}

// reconciles sums controller_runtime_reconcile_total.
func reconciles() float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return -1
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// timerLog writes one line per timer run (the spawning benchmark reads it
// after the operator exited): "start lateness duration", the start in
// Unix nanoseconds, the others in nanoseconds.
type timerLog struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

func newTimerLog(path string) (*timerLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("timer log: %w", err)
	}
	return &timerLog{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (l *timerLog) observe(_ string, lateness, took time.Duration) {
	start := time.Now().Add(-took).UnixNano()
	l.mu.Lock()
	fmt.Fprintf(l.w, "%d %d %d\n", start, lateness.Nanoseconds(), took.Nanoseconds())
	l.mu.Unlock()
}

// close flushes the log; runs still observed afterwards are dropped.
func (l *timerLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.w.Flush()
	_ = l.f.Close()
	l.w.Reset(io.Discard)
}

// scrape serves the metrics endpoint's answer every period, into nothing,
// until ctx ends: the cost of being scraped (the issue's "scraped every
// 5 s"), without a network in between.
func scrape(ctx context.Context, every time.Duration) {
	if every <= 0 {
		return
	}
	h := metrics.Handler()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/metrics", nil)
			h.ServeHTTP(discardResponse{header: http.Header{}}, req)
		}
	}
}

// discardResponse is an http.ResponseWriter that drops the body.
type discardResponse struct{ header http.Header }

func (d discardResponse) Header() http.Header         { return d.header }
func (d discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d discardResponse) WriteHeader(int)             {}
