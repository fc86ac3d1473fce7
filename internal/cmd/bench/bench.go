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
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// benchOptions are the command's flags.
type benchOptions struct {
	N           int
	Concurrency int
	Contenders  []string
	// Rounds is how many times every contender runs, in alternating order
	// and with the contenders' phases interleaved (rounds.go).
	Rounds int
	// Warmup runs an unmeasured pass of the first contender before the
	// rounds, so that no measured pass pays for warming the control plane
	// up.
	Warmup bool
	JSON   bool
	// PhaseTimeout bounds each phase; ReadyTimeout the start of an
	// operator and its canary.
	PhaseTimeout, ReadyTimeout time.Duration
	// WasmModule and WasmOperator are prebuilt kopfexample.wasm and
	// benchoperator binaries; empty builds them into WorkDir.
	WasmModule, WasmOperator string
	// BaselineOperator is a benchoperator binary built from another commit:
	// the kopf-wasm-baseline contender runs it with the same module, to put
	// a change's before and after side by side in one run.
	BaselineOperator string
	// NativeWorkers is the native controller's MaxConcurrentReconciles
	// (kopf-wasm's settings.Default() runs 16 workers).
	NativeWorkers int
	// WorkDir keeps the audit log, the operators' logs and profiles;
	// empty uses a temporary folder removed at the end.
	WorkDir    string
	CPUProfile bool
	// PeakSnapshots has the kopf-wasm and native operators write what
	// holds their memory at their peak RSS into the work folder
	// (profiling.PeakSnapshots: heap profile, smaps, the Go runtime's
	// memory classes).
	PeakSnapshots bool
	// APIServerProfile, when above zero, profiles the API server's CPU for
	// that long from the start of each pass's create phase (into the work
	// folder); the round's other create phases run right after it.
	APIServerProfile time.Duration
	LogLevel         string
	// Scenarios are "workload" (the phases, the default) or any of
	// "coldstart" and "steady" (coldstart.go, steady.go); Rate and
	// Duration shape the steady one, ColdKeepManagedFields adds a
	// kopf-wasm cold start with managedFields kept and ColdList one with
	// the initial listing a LIST (watching.watchList off).
	Scenarios             []string
	Rate                  float64
	Duration              time.Duration
	ColdKeepManagedFields bool
	ColdList              bool
	// PythonModule is a prebuilt Python kopfexample module (kopf.go);
	// empty builds it into WorkDir. KopfSource is an extract of Kopf
	// 1.44.6's source and KopfPython the python3 that runs it.
	PythonModule, KopfSource, KopfPython string
	// TinyGoModule is a prebuilt TinyGo kopfexample module (tinygo.go);
	// "" builds it with kopf-wasm build --compiler tinygo.
	TinyGoModule string
	// WasmCache has the kopf-wasm contenders load their modules through a
	// compile cache in WorkDir, as `kopf-wasm run` does: a pass after
	// the contender's first loads its module compiled.
	WasmCache bool
	// kopfExample is the Python kopfexample's file, which Kopf runs.
	kopfExample string
}

// contenders by name, in the default order.
var knownContenders = []string{"kopf-wasm", "native"}

// extraContenders may be named with -contenders: kopf-wasm-scraped is
// kopf-wasm with its metrics read every 5 s, kopf-wasm-nometrics kopf-wasm
// recording none (the cost of metrics, metricscost.go).
// kopf-wasm-python is kopf-wasm with the Python kopfexample module, kopf
// Kopf 1.44.6 itself running that module's file (kopf.go).
// kopf-wasm-baseline is kopf-wasm run by -baseline-operator.
// kopf-wasm-tinygo is kopf-wasm with the Go kopfexample built with TinyGo
// (tinygo.go).
var extraContenders = []string{"kopf-wasm-scraped", "kopf-wasm-nometrics", pythonContender, kopfContender, baselineContender, tinygoContender}

const baselineContender = "kopf-wasm-baseline"

// withDefaults fills every unset option.
func (o benchOptions) withDefaults() benchOptions {
	if o.N <= 0 {
		o.N = 2000
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if len(o.Contenders) == 0 {
		o.Contenders = knownContenders
	}
	if o.Rounds <= 0 {
		o.Rounds = 2
	}
	if o.PhaseTimeout <= 0 {
		o.PhaseTimeout = 15 * time.Minute
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 3 * time.Minute
	}
	if o.NativeWorkers <= 0 {
		o.NativeWorkers = 16
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = []string{scenarioWorkload}
	}
	if o.Rate <= 0 {
		o.Rate = 50
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Minute
	}
	if o.KopfSource == "" {
		o.KopfSource = "/work/kopf-1.44.6"
	}
	if o.KopfPython == "" {
		o.KopfPython = "/usr/bin/python3"
	}
	return o
}

// scale reports whether the options ask for the scale scenarios rather
// than the workload.
func (o benchOptions) scale() bool {
	return !slices.Contains(o.Scenarios, scenarioWorkload)
}

func parseBench(args []string, stderr io.Writer) (benchOptions, error) {
	var o benchOptions
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.N, "n", 2000, "objects in the workload")
	fs.IntVar(&o.Concurrency, "c", 16, "the driver's concurrent requests")
	contenders := fs.String("contenders", strings.Join(knownContenders, ","), "contenders to run, in order (reversed in every other round)")
	fs.IntVar(&o.Rounds, "rounds", 2, "passes of every contender, their phases interleaved, the order reversed every other round")
	fs.BoolVar(&o.Warmup, "warmup", true, "run an unmeasured pass of the first contender before the rounds")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of a table")
	fs.DurationVar(&o.PhaseTimeout, "phase-timeout", 15*time.Minute, "longest wait for one phase")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 3*time.Minute, "longest wait for an operator to start and handle the canary")
	fs.StringVar(&o.WasmModule, "wasm", "", "prebuilt kopfexample.wasm (default: build it)")
	fs.StringVar(&o.WasmOperator, "wasm-operator", "", "prebuilt host/internal/cmd/benchoperator binary (default: build it)")
	fs.StringVar(&o.BaselineOperator, "baseline-operator", "", "benchoperator binary built from the commit to compare with, for "+baselineContender)
	fs.StringVar(&o.PythonModule, "python-wasm", "", "prebuilt Python kopfexample module for "+pythonContender+" (default: build it with kopf-wasm build)")
	fs.StringVar(&o.TinyGoModule, "tinygo-wasm", "", "prebuilt TinyGo kopfexample module for "+tinygoContender+" (default: build it with kopf-wasm build --compiler tinygo)")
	fs.StringVar(&o.KopfSource, "kopf-source", "/work/kopf-1.44.6", "Kopf "+kopfVersion+"'s source, extracted from its tag, for the kopf contender")
	fs.StringVar(&o.KopfPython, "kopf-python", "/usr/bin/python3", "the python3 that runs Kopf, with Debian's python3-aiohttp and kin")
	fs.BoolVar(&o.WasmCache, "wasm-cache", false,
		"the kopf-wasm contenders load their modules through a compile cache in the work folder, as kopf-wasm run does (each one's first start compiles)")
	fs.IntVar(&o.NativeWorkers, "native-workers", 16, "the native controller's MaxConcurrentReconciles")
	fs.StringVar(&o.WorkDir, "workdir", "", "keep the audit log, operator logs and profiles here (default: a temporary folder, removed)")
	fs.BoolVar(&o.PeakSnapshots, "peak-snapshots", false,
		"have the kopf-wasm and native operators write a heap profile, smaps and the runtime's memory classes at their peak RSS into the work folder")
	fs.BoolVar(&o.CPUProfile, "cpuprofile", false, "have each operator write a CPU profile of the phases into the work folder")
	fs.DurationVar(&o.APIServerProfile, "apiserver-profile", 0,
		"profile the API server's CPU for this long from the start of each pass's create phase (into the work folder; the round's other create phases follow it)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "the operators' log level (their logs go to the work folder)")
	scenarios := fs.String("scenario", scenarioWorkload,
		"workload (the phases), or coldstart and/or steady (comma-separated; on N created and handled objects, each contender in turn)")
	fs.Float64Var(&o.Rate, "rate", 50, "the steady scenario's changes per second")
	fs.DurationVar(&o.Duration, "duration", 5*time.Minute, "how long the steady scenario sends changes")
	fs.BoolVar(&o.ColdKeepManagedFields, "cold-keep-managed-fields", true,
		"in the coldstart scenario, start kopf-wasm once with managedFields kept in its cache before the default start")
	fs.BoolVar(&o.ColdList, "cold-list", true,
		"in the coldstart scenario, start kopf-wasm once with its initial listing a LIST (watching.watchList off) before the default start")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, sc := range strings.Split(*scenarios, ",") {
		if sc = strings.TrimSpace(sc); sc == "" {
			continue
		}
		if !slices.Contains(knownScenarios, sc) {
			return o, fmt.Errorf("-scenario: unknown scenario %q (known: %s)", sc, strings.Join(knownScenarios, ", "))
		}
		o.Scenarios = append(o.Scenarios, sc)
	}
	if slices.Contains(o.Scenarios, scenarioWorkload) && len(o.Scenarios) > 1 {
		return o, fmt.Errorf("-scenario: %s runs alone", scenarioWorkload)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Contenders = nil
	for _, c := range strings.Split(*contenders, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if !slices.Contains(knownContenders, c) && !slices.Contains(extraContenders, c) {
			return o, fmt.Errorf("-contenders: unknown contender %q (known: %s)", c, strings.Join(append(slices.Clone(knownContenders), extraContenders...), ", "))
		}
		o.Contenders = append(o.Contenders, c)
	}
	if slices.Contains(o.Contenders, baselineContender) && o.BaselineOperator == "" {
		return o, fmt.Errorf("-contenders: %s needs -baseline-operator, a benchoperator built from the commit to compare with (go build -o FILE ./host/internal/cmd/benchoperator in a checkout of it)", baselineContender)
	}
	return o.withDefaults(), nil
}

// runBench is the benchmark command.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseBench(args, stderr)
	if err != nil {
		return err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	cleanup, err := workFolder(&o.WorkDir, "kopf-wasm-bench-")
	if err != nil {
		return err
	}
	defer cleanup()
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }

	if err := o.build(ctx, root, progress); err != nil {
		return err
	}
	policy := filepath.Join(o.WorkDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return fmt.Errorf("audit policy: %w", err)
	}
	auditLog := filepath.Join(o.WorkDir, "audit.log")
	progress("starting the control plane")
	env, err := testenv.New(ctx, testenv.Options{
		CRDPaths:       []string{filepath.Join(root, "examples", "crd.yaml")},
		KubeconfigPath: filepath.Join(o.WorkDir, "kubeconfig"),
		APIServerFlags: auditLogFlags(policy, auditLog),
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			progress("%v", err)
		}
	}()
	d, err := newDriver(env, auditLog, o)
	if err != nil {
		return err
	}
	if o.scale() {
		return d.runScale(ctx, stdout, progress)
	}
	rep := report{N: o.N, Concurrency: o.Concurrency, NativeWorkers: o.NativeWorkers, Rounds: o.Rounds, Go: runtime.Version(),
		Server: d.serverVersion(ctx), Machine: machine()}
	rounds := o.schedule()
	if o.Warmup {
		if _, err := d.round(ctx, []pass{{Contender: rounds[0][0].Contender}}, progress); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	for _, round := range rounds {
		res, err := d.round(ctx, round, progress)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res...)
	}
	rep.Summary = combinePasses(rep.Results, o.Contenders)
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.table(stdout)
	return nil
}

// auditLogFlags are the API server's flags for the audit log. The log is
// never rotated: the API server's log writer (lumberjack) would otherwise
// rotate it at 100 MB, which eight passes exceed, and the count of a
// pass would miss the rotated part.
func auditLogFlags(policy, path string) map[string]string {
	return map[string]string{"audit-policy-file": policy, "audit-log-path": path, "audit-log-maxsize": "1000000"}
}

// build builds the kopfexample module and the kopf-wasm operator unless
// prebuilt ones were given, the Python module when a contender runs it,
// and readies Kopf's source when Kopf runs.
func (o *benchOptions) build(ctx context.Context, root string, progress func(string, ...any)) error {
	if err := buildOperator(ctx, root, o.WorkDir, "kopfexample", &o.WasmModule, &o.WasmOperator, progress); err != nil {
		return err
	}
	if needs(o.Contenders, pythonContender) {
		if err := buildPython(ctx, root, o.WorkDir, &o.PythonModule, progress); err != nil {
			return err
		}
	}
	if needs(o.Contenders, tinygoContender) {
		if err := buildTinyGo(ctx, root, o.WorkDir, &o.TinyGoModule, progress); err != nil {
			return err
		}
	}
	o.kopfExample = filepath.Join(root, pythonExample, "example.py")
	if needs(o.Contenders, kopfContender) {
		return prepareKopf(ctx, o.KopfSource, o.KopfPython)
	}
	return nil
}

// buildOperator builds the module pkg of the examples module into workDir
// (unless *module names a prebuilt one) and the benchmark's kopf-wasm
// operator (unless *operator does), and checks that both exist.
func buildOperator(ctx context.Context, root, workDir, pkg string, module, operator *string, progress func(string, ...any)) error {
	if *module == "" {
		*module = filepath.Join(workDir, filepath.Base(pkg)+".wasm")
		progress("building %s", *module)
		cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", *module, "./"+pkg)
		cmd.Dir = filepath.Join(root, "examples")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the %s module: %w\n%s", filepath.Base(pkg), err, out)
		}
	}
	if *operator == "" {
		*operator = filepath.Join(workDir, "benchoperator")
		progress("building %s", *operator)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", *operator, "./host/internal/cmd/benchoperator")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the kopf-wasm operator: %w\n%s", err, out)
		}
	}
	for _, p := range []string{*module, *operator} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("prebuilt file: %w", err)
		}
	}
	return nil
}

// machine describes the CPU the benchmark runs on.
func machine() string {
	model := runtime.GOARCH
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", model, runtime.NumCPU())
}

// workFolder makes *dir (a new temporary folder with the prefix when
// empty) and returns what removes it afterwards: the temporary one only.
func workFolder(dir *string, prefix string) (cleanup func(), err error) {
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return nil, fmt.Errorf("work folder: %w", err)
		}
		return func() {}, nil
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("work folder: %w", err)
	}
	*dir = tmp
	return func() { os.RemoveAll(tmp) }, nil
}
