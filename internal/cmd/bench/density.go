package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// densityCommand is the subcommand of the density benchmark (issue 34):
// many different operators on one control plane, served by one kopf-wasm
// host or by one process each.
//
//	go run ./internal/cmd/bench density -operators 20 -objects 100 -start-modules 100
//
// For each contender in turn, in a namespace of its own, it starts the
// -operators generated operators (densitygen.go) — kopf-wasm: one
// benchoperator with every module; kopf-wasm-tinygo, kopf-wasm-rust,
// kopf-wasm-python: the same with the modules built by TinyGo, in Rust,
// in Python; native: one controller-runtime process per
// operator; kopf: one Kopf 1.44.6 process per operator — waits until each
// has handled a canary object, then sends a burst of -objects changes per
// operator, three times (create, update spec.field, delete), and waits for
// every result. It reports the contender's summed peak RSS (VmHWM of each
// process), CPU per change and writes per change over the bursts (the
// audit log), and each burst's time. With -start-modules M it then starts
// one host with M modules (of each of -start-contenders) twice: compiling
// them, then from the compile cache the first start filled; it reports
// the time until the host is ready (modules loaded) and synced (watches
// listed) and its RSS. The generated sources, the modules (built beside
// them, in gen/go, gen/tinygo, gen/rust-wasm and gen/python-wasm, and kept
// for later runs with the same -workdir), logs and the audit log are in
// the work folder. With -peak-snapshots every Go process (hosts and
// controllers) keeps smaps and its memory classes at its peak RSS and a
// heap profile at exit in <namespace>-peak/operator-NNN, and the table
// breaks the peaks down by mapping (peakgroups.go).
const densityCommand = "density"

// densityOptions are the subcommand's flags.
type densityOptions struct {
	Operators, Objects, StartModules int
	Contenders                       []string
	// StartContenders are the hosts started with StartModules modules;
	// StartCold starts each once with an empty compile cache first.
	StartContenders            []string
	StartCold                  bool
	Timer                      time.Duration
	Concurrency                int
	PhaseTimeout, ReadyTimeout time.Duration
	WorkDir, LogLevel          string
	KopfSource, KopfPython     string
	JSON                       bool
	// PeakSnapshots has the Go processes write what holds their memory
	// at their peak RSS (profiling.PeakSnapshots).
	PeakSnapshots bool
}

// densityContenders are the contenders the subcommand knows, in order.
var densityContenders = []string{"kopf-wasm", tinygoContender, rustContender, pythonContender, "native", kopfContender}

// densityHosts are the contenders that are one host with every module,
// the ones -start-contenders takes.
var densityHosts = []string{"kopf-wasm", tinygoContender, rustContender, pythonContender}

func parseDensity(args []string, stderr io.Writer) (densityOptions, error) {
	var o densityOptions
	fs := flag.NewFlagSet("bench density", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.Operators, "operators", 20, "different operators (generated resources and modules)")
	fs.IntVar(&o.Objects, "objects", 100, "objects per operator in each burst (created, updated, deleted)")
	fs.IntVar(&o.StartModules, "start-modules", 100, "then start one host with this many modules (0: skip)")
	contenders := fs.String("contenders", strings.Join(densityContenders, ","), "contenders to run, in order")
	starts := fs.String("start-contenders", "kopf-wasm", "the hosts started with -start-modules modules: any of "+strings.Join(densityHosts, ", ")+
		" (TinyGo builds take ~30 s a module)")
	fs.BoolVar(&o.StartCold, "start-cold", true,
		"start the -start-modules host once compiling (an empty compile cache) before the start from the cache (false: only from the cache the work folder holds)")
	fs.DurationVar(&o.Timer, "timer", time.Minute, "every operator's timer interval (0: operators without a timer)")
	fs.IntVar(&o.Concurrency, "c", 16, "the driver's concurrent requests")
	fs.DurationVar(&o.PhaseTimeout, "phase-timeout", 15*time.Minute, "longest wait for one burst")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 10*time.Minute, "longest wait for a contender to start and handle its canaries")
	fs.StringVar(&o.WorkDir, "workdir", "", "keep the generated operators, modules, logs and audit log here (default: a temporary folder, removed)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "the operators' log level")
	fs.StringVar(&o.KopfSource, "kopf-source", "/work/kopf-1.44.6", "Kopf "+kopfVersion+"'s source, for the kopf contender")
	fs.StringVar(&o.KopfPython, "kopf-python", "/usr/bin/python3", "the python3 that runs Kopf")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON")
	fs.BoolVar(&o.PeakSnapshots, "peak-snapshots", false,
		"have the hosts and controllers write smaps, the runtime's memory classes and goroutines at their peak RSS and a heap profile at exit into the work folder, and break the peaks down by mapping")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("density: unexpected arguments %q", fs.Args())
	}
	if o.Operators < 1 || o.Objects < 1 || o.StartModules < 0 || o.StartModules > 999 || o.Operators > 999 {
		return o, fmt.Errorf("density: -operators (1-999), -objects (at least 1) and -start-modules (0-999) are out of range")
	}
	for _, c := range strings.Split(*contenders, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if !slices.Contains(densityContenders, c) {
			return o, fmt.Errorf("density: -contenders: unknown contender %q (known: %s)", c, strings.Join(densityContenders, ", "))
		}
		o.Contenders = append(o.Contenders, c)
	}
	for _, c := range strings.Split(*starts, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if !slices.Contains(densityHosts, c) {
			return o, fmt.Errorf("density: -start-contenders: %q is not a host (known: %s)", c, strings.Join(densityHosts, ", "))
		}
		o.StartContenders = append(o.StartContenders, c)
	}
	return o, nil
}

// densityResult is one contender's figures.
type densityResult struct {
	Contender string `json:"contender"`
	Processes int    `json:"processes"`
	// ReadySeconds is from the start until every operator handled its
	// canary.
	ReadySeconds float64 `json:"ready_seconds"`
	// Phases are the bursts: from the first request until every object
	// shows its result (or is gone).
	Phases []phaseResult `json:"phases"`
	// PeakRSSMB is the sum of the processes' peak RSS; ReadyRSSMB the sum
	// of their RSS once ready.
	PeakRSSMB  float64 `json:"peak_rss_mb"`
	ReadyRSSMB float64 `json:"ready_rss_mb"`
	// CPUPerChangeMs is the processes' CPU over the bursts per change.
	CPUPerChangeMs  float64    `json:"cpu_per_change_ms"`
	Writes          writeCount `json:"writes"`
	WritesPerChange float64    `json:"writes_per_change"`
	Changes         int        `json:"changes"`
	// Peak is the processes' peak RSS by mapping, summed (with
	// -peak-snapshots).
	Peak *peakGroups `json:"peak_by_mapping_mb,omitempty"`
}

// densityStart is a start of one host with many modules.
type densityStart struct {
	Contender string `json:"contender"`
	Modules   int    `json:"modules"`
	Cached    bool   `json:"cached"`
	// ReadySeconds is until the host printed "ready" (modules loaded),
	// SyncedSeconds until its watches synced.
	ReadySeconds  float64 `json:"ready_seconds"`
	SyncedSeconds float64 `json:"synced_seconds"`
	PeakRSSMB     float64 `json:"peak_rss_mb"`
	RSSMB         float64 `json:"rss_mb"`
	// Peak is the host's peak RSS by mapping (with -peak-snapshots).
	Peak *peakGroups `json:"peak_by_mapping_mb,omitempty"`
}

// densityRun is what a run of the subcommand shares.
type densityRun struct {
	o        densityOptions
	root     string
	d        *driver
	modules  map[string][]string // built modules by contender
	operator string              // the benchoperator binary
	progress func(string, ...any)
}

// runDensity is the density subcommand.
func runDensity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseDensity(args, stderr)
	if err != nil {
		return err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	cleanup, err := workFolder(&o.WorkDir, "kopf-wasm-density-")
	if err != nil {
		return err
	}
	defer cleanup()
	r := &densityRun{o: o, root: root, modules: map[string][]string{},
		progress: func(format string, a ...any) { fmt.Fprintf(stderr, "density: "+format+"\n", a...) }}
	if err := r.build(ctx); err != nil {
		return err
	}
	policy, auditLog := filepath.Join(o.WorkDir, "audit-policy.yaml"), filepath.Join(o.WorkDir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return fmt.Errorf("audit policy: %w", err)
	}
	crds := filepath.Join(o.WorkDir, "crds.yaml")
	if err := writeDensityCRDs(crds, max(o.Operators, o.StartModules)); err != nil {
		return err
	}
	r.progress("starting the control plane")
	env, err := testenv.New(ctx, testenv.Options{CRDPaths: []string{crds}, KubeconfigPath: filepath.Join(o.WorkDir, "kubeconfig"),
		APIServerFlags: auditLogFlags(policy, auditLog)})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			r.progress("%v", err)
		}
	}()
	if r.d, err = newDriver(env, auditLog, benchOptions{LogLevel: o.LogLevel, KopfSource: o.KopfSource, KopfPython: o.KopfPython}); err != nil {
		return err
	}
	var results []densityResult
	for _, c := range o.Contenders {
		res, err := r.contender(ctx, c)
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		results = append(results, res)
	}
	var starts []densityStart
	if o.StartModules > 0 {
		for _, c := range o.StartContenders {
			for _, cached := range []bool{false, true} {
				if !cached && !o.StartCold {
					continue
				}
				st, err := r.start(ctx, c, cached)
				if err != nil {
					return fmt.Errorf("%s: starting %d modules: %w", c, o.StartModules, err)
				}
				starts = append(starts, st)
			}
		}
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"results": results, "starts": starts})
	}
	densityTable(stdout, o, results, starts)
	return nil
}

// build generates the operators and builds what the contenders run.
func (r *densityRun) build(ctx context.Context) error {
	o := r.o
	n := max(o.Operators, o.StartModules)
	gen := filepath.Join(o.WorkDir, "gen")
	if err := generateDensity(r.root, gen, n, o.Timer.String(), o.Timer.Seconds()); err != nil {
		return err
	}
	r.operator = filepath.Join(o.WorkDir, "benchoperator")
	r.progress("building %s", r.operator)
	if err := goBuild(ctx, r.root, r.operator, "./host/internal/cmd/benchoperator"); err != nil {
		return err
	}
	var cli string
	if needs(o.Contenders, tinygoContender, pythonContender) || needs(o.StartContenders, tinygoContender, pythonContender) {
		cli = filepath.Join(o.WorkDir, "kopf-wasm")
		r.progress("building %s", cli)
		if err := goBuild(ctx, r.root, cli, "./cmd/kopf-wasm"); err != nil {
			return err
		}
	}
	for _, c := range densityHosts {
		count := 0
		if needs(o.Contenders, c) {
			count = o.Operators
		}
		if needs(o.StartContenders, c) && o.StartModules > 0 {
			count = max(count, o.StartModules)
		}
		if count == 0 {
			continue
		}
		var paths []string
		var err error
		switch c {
		case rustContender:
			paths, err = buildDensityRust(ctx, r.root, gen, count, r.progress)
		case pythonContender:
			paths, err = buildDensityPython(ctx, gen, cli, count, r.progress)
		default:
			compiler := map[string]string{"kopf-wasm": "go", tinygoContender: "tinygo"}[c]
			paths, err = buildDensityModules(ctx, gen, compiler, cli, count, r.progress)
		}
		if err != nil {
			return err
		}
		r.modules[c] = paths
	}
	if slices.Contains(o.Contenders, kopfContender) {
		return prepareKopf(ctx, o.KopfSource, o.KopfPython)
	}
	return nil
}

// argvs are the processes of contender c serving the first n operators
// in namespace.
func (r *densityRun) argvs(c, namespace, cacheDir string, n int) ([][]string, error) {
	argvs, err := r.contenderArgvs(c, namespace, cacheDir, n)
	if err != nil || !r.o.PeakSnapshots || c == kopfContender {
		return argvs, err
	}
	for i := range argvs {
		argvs[i] = append(argvs[i], "-peak-dir", peakDir(r.o.WorkDir, namespace, i))
	}
	return argvs, nil
}

// peakDir is where process i of a contender in namespace writes its peak
// snapshots.
func peakDir(workDir, namespace string, i int) string {
	return filepath.Join(workDir, namespace+"-peak", fmt.Sprintf("operator-%03d", i+1))
}

// contenderArgvs are argvs without the peak snapshots.
func (r *densityRun) contenderArgvs(c, namespace, cacheDir string, n int) ([][]string, error) {
	o := r.o
	switch c {
	case "kopf-wasm", tinygoContender, rustContender, pythonContender:
		return [][]string{{r.operator, "-kubeconfig", r.d.kubeconfig, "-namespace", namespace, "-log-level", o.LogLevel,
			"-wasm", strings.Join(r.modules[c][:n], ","), "-user-agent", "kopf-wasm-bench", "-cache-dir", cacheDir, "-report-progress"}}, nil
	case "native":
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this binary to re-execute it: %w", err)
		}
		var out [][]string
		for i := 1; i <= n; i++ {
			out = append(out, []string{self, operatorCommand, "-kubeconfig", r.d.kubeconfig, "-namespace", namespace,
				"-log-level", o.LogLevel, "-user-agent", "native-bench", "-group", densityGroup, "-version", "v1",
				"-kind", densityKind(i), "-timer", o.Timer.String()})
		}
		return out, nil
	case kopfContender:
		var out [][]string
		for i := 1; i <= n; i++ {
			argv := []string{"/bin/sh", "-c", `echo ready; exec "$@"`, "kopf",
				"env", "PYTHONPATH=" + o.KopfSource, "KUBECONFIG=" + r.d.kubeconfig, "PYTHONDONTWRITEBYTECODE=1",
				o.KopfPython, "-m", "kopf", "run", "--standalone", "--namespace", namespace}
			argv = append(argv, kopfLogFlags(o.LogLevel)...)
			out = append(out, append(argv, filepath.Join(o.WorkDir, "gen", "kopf", strings.ToLower(densityKind(i))+".py")))
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown contender %q", c)
}

// contender runs the bursts against one contender.
func (r *densityRun) contender(ctx context.Context, c string) (densityResult, error) {
	o, d := r.o, r.d
	res := densityResult{Contender: c, Changes: 3 * o.Operators * o.Objects}
	ns := fmt.Sprintf("density-%s-%d", c, time.Now().Unix())
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	trackCtx, stopTracking := context.WithCancel(ctx)
	defer stopTracking()
	trackers := make([]*tracker, o.Operators)
	for i := range trackers {
		trackers[i] = newTracker("")
		if err := trackers[i].runFor(trackCtx, d.dyn, densityGVR(i+1), ns); err != nil {
			return res, err
		}
	}
	argvs, err := r.argvs(c, ns, filepath.Join(o.WorkDir, "wasm-cache-"+c), o.Operators)
	if err != nil {
		return res, err
	}
	res.Processes = len(argvs)
	started := time.Now()
	children, err := startChildren(argvs, filepath.Join(o.WorkDir, ns))
	defer stopChildren(children)
	if err != nil {
		return res, err
	}
	alive := func() error { return allAlive(children) }
	for _, ch := range children {
		if err := ch.waitReady(o.ReadyTimeout); err != nil {
			return res, err
		}
	}
	w := &densityWork{d: d, ns: ns, trackers: trackers, concurrency: o.Concurrency, check: alive}
	if err := w.canaries(ctx, o.ReadyTimeout); err != nil {
		return res, err
	}
	res.ReadySeconds = time.Since(started).Seconds()
	if res.ReadyRSSMB, err = sumRSS(children, "VmRSS"); err != nil {
		return res, err
	}
	r.progress("%s: %d processes ready in %.1fs, RSS %.1f MB", c, len(children), res.ReadySeconds, res.ReadyRSSMB)
	cpu0, err := sumCPU(children)
	if err != nil {
		return res, err
	}
	auditFrom, err := fileSize(d.auditLog)
	if err != nil {
		return res, err
	}
	since := time.Now()
	for _, ph := range w.bursts(o.Objects) {
		pctx, cancel := context.WithTimeout(ctx, o.PhaseTimeout)
		t0 := time.Now()
		err := w.burst(pctx, o.Objects, ph)
		cancel()
		if err != nil {
			return res, fmt.Errorf("%s burst: %w", ph.name, err)
		}
		res.Phases = append(res.Phases, phaseResult{Name: ph.name, Seconds: time.Since(t0).Seconds()})
		r.progress("%s: %s burst of %d changes in %.2fs", c, ph.name, o.Operators*o.Objects, time.Since(t0).Seconds())
	}
	cpu1, err := sumCPU(children)
	if err != nil {
		return res, err
	}
	if res.PeakRSSMB, err = sumRSS(children, "VmHWM"); err != nil {
		return res, err
	}
	if o.PeakSnapshots && c != kopfContender {
		if res.Peak, err = readPeaks(o.WorkDir, ns, argvs); err != nil {
			return res, err
		}
	}
	res.CPUPerChangeMs = (cpu1 - cpu0).Seconds() * 1000 / float64(res.Changes)
	time.Sleep(time.Second) // trailing writes, if any, reach the audit log
	ops, _, err := d.countWrites(auditFrom, writeFilter{Namespace: ns, Since: since, Driver: driverAgent})
	if err != nil {
		return res, err
	}
	res.Writes, res.WritesPerChange = ops, float64(ops.Total)/float64(res.Changes)
	r.progress("%s: peak RSS %.1f MB, CPU %.3f ms per change, %d writes (%s)", c, res.PeakRSSMB, res.CPUPerChangeMs, ops.Total, ops)
	return res, nil
}

// start starts one host with the first StartModules modules of contender
// c, compiling them (cached false, an empty compile cache) or loading
// them from the compile cache the previous start filled, and measures its
// time to ready and synced and its RSS, then stops it.
func (r *densityRun) start(ctx context.Context, c string, cached bool) (densityStart, error) {
	o, d := r.o, r.d
	st := densityStart{Contender: c, Modules: o.StartModules, Cached: cached}
	ns := fmt.Sprintf("density-start-%s-%d", c, time.Now().Unix())
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return st, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	cacheDir := filepath.Join(o.WorkDir, "wasm-cache-start-"+c)
	if !cached {
		if err := os.RemoveAll(cacheDir); err != nil {
			return st, fmt.Errorf("emptying the compile cache: %w", err)
		}
	}
	argvs, err := r.argvs(c, ns, cacheDir, o.StartModules)
	if err != nil {
		return st, err
	}
	t0 := time.Now()
	children, err := startChildren(argvs, filepath.Join(o.WorkDir, ns))
	defer stopChildren(children)
	if err != nil {
		return st, err
	}
	ch := children[0]
	if err := ch.waitReady(o.ReadyTimeout); err != nil {
		return st, err
	}
	st.ReadySeconds = time.Since(t0).Seconds()
	select {
	case <-ch.synced:
	case <-ch.exited:
		return st, fmt.Errorf("the host exited (%v); see %s", ch.err, ch.log.Name())
	case <-time.After(o.ReadyTimeout):
		return st, fmt.Errorf("the host did not sync within %s; see %s", o.ReadyTimeout, ch.log.Name())
	}
	st.SyncedSeconds = time.Since(t0).Seconds()
	if st.PeakRSSMB, err = sumRSS(children, "VmHWM"); err != nil {
		return st, err
	}
	if st.RSSMB, err = sumRSS(children, "VmRSS"); err != nil {
		return st, err
	}
	if o.PeakSnapshots {
		if st.Peak, err = readPeaks(o.WorkDir, ns, argvs); err != nil {
			return st, err
		}
	}
	r.progress("%s: %d modules (cached %v): ready in %.1fs, synced in %.1fs, RSS %.1f MB, peak %.1f MB",
		c, o.StartModules, cached, st.ReadySeconds, st.SyncedSeconds, st.RSSMB, st.PeakRSSMB)
	return st, nil
}

// startChildren starts every argv, each logging into dir.
func startChildren(argvs [][]string, dir string) ([]*child, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("operator logs: %w", err)
	}
	var children []*child
	for i, argv := range argvs {
		ch, err := startChild(argv, filepath.Join(dir, fmt.Sprintf("operator-%03d.log", i+1)))
		if err != nil {
			return children, err
		}
		children = append(children, ch)
	}
	return children, nil
}

// stopChildren stops every child, all at once.
func stopChildren(children []*child) {
	var wg sync.WaitGroup
	for _, ch := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = ch.stop(30 * time.Second)
		}()
	}
	wg.Wait()
}

// allAlive fails when any child has exited.
func allAlive(children []*child) error {
	for _, ch := range children {
		if err := ch.alive(); err != nil {
			return err
		}
	}
	return nil
}

// sumCPU adds up the children's CPU time so far.
func sumCPU(children []*child) (time.Duration, error) {
	var sum time.Duration
	for _, ch := range children {
		t, err := procCPU(ch.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += t
	}
	return sum, nil
}

// sumRSS adds up a /proc/<pid>/status field (VmRSS, VmHWM) of the
// children, in MB.
func sumRSS(children []*child, field string) (float64, error) {
	var kb int64
	for _, ch := range children {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", ch.cmd.Process.Pid))
		if err != nil {
			return 0, fmt.Errorf("operator RSS: %w", err)
		}
		v, err := parseStatusKB(string(data), field)
		if err != nil {
			return 0, err
		}
		kb += v
	}
	return float64(kb) / 1024, nil
}

// densityWork drives the objects of every operator's resource in one
// namespace.
type densityWork struct {
	d           *driver
	ns          string
	trackers    []*tracker
	concurrency int
	check       func() error
}

// densityBurst is one burst: what is done to each object, and when an
// operator's objects are done.
type densityBurst struct {
	name string
	do   func(ctx context.Context, op int, name string) error
	done func(progress) bool
}

// bursts are the create, update and delete bursts of n objects per
// operator.
func (w *densityWork) bursts(n int) []densityBurst {
	return []densityBurst{
		{name: "create", do: func(ctx context.Context, op int, name string) error {
			_, err := w.res(op).Create(ctx, densityObject(op, name, "initial"), metav1.CreateOptions{})
			return err
		}, done: func(p progress) bool { return p.Objects == n && p.Created == n }},
		{name: "update", do: func(ctx context.Context, op int, name string) error {
			_, err := w.res(op).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"field":"changed"}}`), metav1.PatchOptions{})
			return err
		}, done: func(p progress) bool { return p.Updated == n }},
		{name: "delete", do: func(ctx context.Context, op int, name string) error {
			err := w.res(op).Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}, done: func(p progress) bool { return p.Objects == 0 }},
	}
}

func (w *densityWork) res(op int) interface {
	Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
	Delete(context.Context, string, metav1.DeleteOptions, ...string) error
} {
	return w.d.dyn.Resource(densityGVR(op + 1)).Namespace(w.ns)
}

// densityObject is an object of operator op's resource.
func densityObject(op int, name, field string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": densityGroup + "/v1", "kind": densityKind(op + 1),
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"field": field},
	}}
}

// burst sends n changes per operator, interleaved across the operators,
// with the driver's concurrency, and waits until every operator's objects
// are done.
func (w *densityWork) burst(ctx context.Context, n int, b densityBurst) error {
	type job struct{ op, i int }
	jobs := make(chan job)
	errs := make(chan error, w.concurrency)
	var wg sync.WaitGroup
	for range w.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := b.do(ctx, j.op, objectName(j.i)); err != nil {
					select {
					case errs <- fmt.Errorf("%s of %s: %w", b.name, objectName(j.i), err):
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		for op := range w.trackers {
			jobs <- job{op, i}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	for _, t := range w.trackers {
		if err := t.wait(ctx, b.done, w.check); err != nil {
			return err
		}
	}
	return nil
}

// canaries creates one object per operator, waits until each shows its
// create result, deletes them and waits until they are gone: every
// operator then handles objects.
func (w *densityWork) canaries(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for op := range w.trackers {
		if _, err := w.res(op).Create(ctx, densityObject(op, canaryName, "canary"), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("canary: %w", err)
		}
	}
	for _, t := range w.trackers {
		if err := t.wait(ctx, func(p progress) bool { return p.Created == 1 }, w.check); err != nil {
			return fmt.Errorf("canary: %w", err)
		}
	}
	for op := range w.trackers {
		if err := w.res(op).Delete(ctx, canaryName, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("canary: %w", err)
		}
	}
	for _, t := range w.trackers {
		if err := t.wait(ctx, func(p progress) bool { return p.Objects == 0 }, w.check); err != nil {
			return fmt.Errorf("canary: %w", err)
		}
	}
	return nil
}

// goBuild builds the package pkg of the root module into out.
func goBuild(ctx context.Context, root, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// densityTable prints the results and the targets of issue 34.
func densityTable(w io.Writer, o densityOptions, results []densityResult, starts []densityStart) {
	fmt.Fprintf(w, "density: %d operators, %d objects each per burst (%d changes), timer %s; %s, %d CPUs\n\n",
		o.Operators, o.Objects, 3*o.Operators*o.Objects, o.Timer, runtime.Version(), runtime.NumCPU())
	fmt.Fprintf(w, "%-18s %5s %8s %8s %8s %8s %10s %10s %10s %8s\n", "contender", "procs", "ready s", "create s", "update s", "delete s",
		"ready MB", "peak MB", "CPU ms/ch", "wr/ch")
	by := map[string]densityResult{}
	for _, r := range results {
		by[r.Contender] = r
		secs := make([]float64, 3)
		for i, ph := range r.Phases {
			if i < 3 {
				secs[i] = ph.Seconds
			}
		}
		fmt.Fprintf(w, "%-18s %5d %8.1f %8.2f %8.2f %8.2f %10.1f %10.1f %10.3f %8.3f\n", r.Contender, r.Processes, r.ReadySeconds,
			secs[0], secs[1], secs[2], r.ReadyRSSMB, r.PeakRSSMB, r.CPUPerChangeMs, r.WritesPerChange)
	}
	fmt.Fprintln(w)
	for _, host := range densityHosts {
		h, ok := by[host]
		if !ok {
			continue
		}
		if n, ok := by["native"]; ok {
			rss, cpu := h.PeakRSSMB/n.PeakRSSMB, h.CPUPerChangeMs/n.CPUPerChangeMs
			fmt.Fprintf(w, "%s/native: peak RSS %.2f× (target ≤ 0.2×: %s), CPU per change %.2f× (target ≤ 1×: %s)\n",
				host, rss, yesNo(rss <= 0.2), cpu, yesNo(cpu <= 1))
		}
		if k, ok := by[kopfContender]; ok {
			rss := h.PeakRSSMB / k.PeakRSSMB
			fmt.Fprintf(w, "%s/kopf: peak RSS %.2f× (target ≤ 0.1×: %s), CPU per change %.2f×\n",
				host, rss, yesNo(rss <= 0.1), h.CPUPerChangeMs/k.CPUPerChangeMs)
		}
	}
	for _, s := range starts {
		how := "compiling"
		if s.Cached {
			how = "from the compile cache"
		}
		fmt.Fprintf(w, "%s, %d modules, %s: ready in %.1fs, synced in %.1fs, RSS %.1f MB (peak %.1f MB)\n",
			s.Contender, s.Modules, how, s.ReadySeconds, s.SyncedSeconds, s.RSSMB, s.PeakRSSMB)
	}
	peakTable(w, results, starts)
}

// peakTable prints the peaks by mapping (-peak-snapshots), a column per
// contender and start.
func peakTable(w io.Writer, results []densityResult, starts []densityStart) {
	var names []string
	var peaks []*peakGroups
	for _, r := range results {
		if r.Peak != nil {
			names, peaks = append(names, r.Contender), append(peaks, r.Peak)
		}
	}
	for _, s := range starts {
		if s.Peak != nil {
			names = append(names, fmt.Sprintf("%s %d start cached=%v", s.Contender, s.Modules, s.Cached))
			peaks = append(peaks, s.Peak)
		}
	}
	if len(peaks) == 0 {
		return
	}
	fmt.Fprintf(w, "\npeak RSS by mapping, MB (summed over a contender's processes, each at its own peak):\n%-22s", "mapping")
	for _, n := range names {
		fmt.Fprintf(w, " | %s", n)
	}
	fmt.Fprintln(w)
	rows := []struct {
		name string
		f    func(*peakGroups) string
	}{
		{"Go heap", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.GoHeap) }},
		{"  heap objects", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.HeapObjects) }},
		{"compiled module code", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.CompiledCode) }},
		{"linear memories", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.LinearMemories) }},
		{"module files (cache)", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.ModuleFiles) }},
		{"binary", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.Binary) }},
		{"rest", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.Rest) }},
		{"VmRSS at the peaks", func(g *peakGroups) string { return fmt.Sprintf("%.1f", g.Total) }},
		{"goroutines", func(g *peakGroups) string { return fmt.Sprint(g.Goroutines) }},
	}
	for _, row := range rows {
		fmt.Fprintf(w, "%-22s", row.name)
		for _, g := range peaks {
			fmt.Fprintf(w, " | %s", row.f(g))
		}
		fmt.Fprintln(w)
	}
}
