package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// shardingCommand measures sharding (run --shards): the kopfexamples
// workload on 1, 2, 3... replicas of benchoperator -shards, each replica's
// CPU per change and the API requests coordination costs per change
// (Lease renewals and listings, the hand-over's version listings) during
// the phases, once the membership has settled.
//
//	go run ./internal/cmd/bench sharding -n 1000 -replicas 1,2,3
const shardingCommand = "sharding"

type shardingOptions struct {
	N, Concurrency           int
	Replicas                 []int
	WorkDir, LogLevel        string
	Timeout                  time.Duration
	WasmModule, WasmOperator string
}

func parseSharding(args []string, stderr io.Writer) (shardingOptions, error) {
	var o shardingOptions
	fs := flag.NewFlagSet("bench sharding", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.N, "n", 1000, "objects in the workload")
	fs.IntVar(&o.Concurrency, "c", 16, "the driver's concurrent requests")
	replicas := fs.String("replicas", "1,2,3", "replica counts to measure, in order")
	fs.StringVar(&o.WorkDir, "workdir", "", "keep the operators' logs here (default: a temporary folder, removed)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "the operators' log level")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "longest wait for one phase or for the membership to settle")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*replicas, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-replicas: %q is not a positive count", s)
		}
		o.Replicas = append(o.Replicas, n)
	}
	return o, nil
}

// shardingResult is one replica count's figures.
type shardingResult struct {
	Replicas int
	Changes  int
	Seconds  float64
	// CPUPerChangeMs is each replica's CPU during the phases divided by
	// every change of the workload (the changes it handled are about
	// 1/Replicas of them).
	CPUPerChangeMs []float64
	// Coordination is the requests coordination made during the phases,
	// summed over the replicas.
	Coordination int64
}

func runSharding(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseSharding(args, stderr)
	if err != nil {
		return err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	cleanup, err := workFolder(&o.WorkDir, "kopf-wasm-bench-sharding-")
	if err != nil {
		return err
	}
	defer cleanup()
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench sharding: "+format+"\n", a...) }
	if err := buildOperator(ctx, root, o.WorkDir, "kopfexample", &o.WasmModule, &o.WasmOperator, progress); err != nil {
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
	cfg.QPS, cfg.UserAgent = -1, driverAgent
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sharding: kopfexamples workload, N=%d (%d changes), %s, %s\n", o.N, 3*o.N, machine(), runtime.Version())
	fmt.Fprintf(stdout, "%-9s %9s %-36s %10s %14s\n", "replicas", "seconds", "CPU per change, each replica (ms)", "coord req", "coord/change")
	for _, r := range o.Replicas {
		res, err := o.pass(ctx, env.Kubeconfig, dyn, cs, r, progress)
		if err != nil {
			return fmt.Errorf("%d replicas: %w", r, err)
		}
		cpus := make([]string, len(res.CPUPerChangeMs))
		for i, c := range res.CPUPerChangeMs {
			cpus[i] = fmt.Sprintf("%.3f", c)
		}
		fmt.Fprintf(stdout, "%-9d %9.1f %-36s %10d %14.4f\n", r, res.Seconds, strings.Join(cpus, " "),
			res.Coordination, float64(res.Coordination)/float64(res.Changes))
	}
	return nil
}

// pass runs the workload on r replicas in a fresh namespace.
func (o shardingOptions) pass(ctx context.Context, kubeconfig string, dyn dynamic.Interface, cs kubernetes.Interface,
	r int, progress func(string, ...any)) (shardingResult, error) {
	res := shardingResult{Replicas: r, Changes: 3 * o.N}
	ns := fmt.Sprintf("bench-shards-%d-%d", r, time.Now().Unix())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return res, err
	}
	var children []*child
	var logs []string
	defer func() {
		for _, c := range children {
			_, _ = c.stop(30 * time.Second)
		}
	}()
	for i := range r {
		logs = append(logs, filepath.Join(o.WorkDir, fmt.Sprintf("%s-r%d.log", ns, i)))
		c, err := startChild([]string{o.WasmOperator, "-kubeconfig", kubeconfig, "-namespace", ns, "-log-level", o.LogLevel,
			"-wasm", o.WasmModule, "-user-agent", "kopf-wasm-bench", "-shards", "-identity", fmt.Sprintf("r%d", i)}, logs[i])
		if err != nil {
			return res, err
		}
		children = append(children, c)
		if err := c.waitReady(o.Timeout); err != nil {
			return res, err
		}
	}
	settled := fmt.Sprintf("settled: %d members", r)
	deadline := time.Now().Add(o.Timeout)
	for i := 0; i < r; {
		if b, _ := os.ReadFile(logs[i]); strings.Contains(string(b), settled) {
			i++
			continue
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("replica %d did not settle on %d members within %s; see %s", i, r, o.Timeout, logs[i])
		}
		time.Sleep(200 * time.Millisecond)
	}
	progress("%d replicas settled", r)
	tr := newTracker(objectPrefix)
	trackCtx, stopTracking := context.WithCancel(ctx)
	defer stopTracking()
	if err := tr.run(trackCtx, dyn, ns); err != nil {
		return res, err
	}
	alive := func() error {
		for _, c := range children {
			if err := c.alive(); err != nil {
				return err
			}
		}
		return nil
	}
	w := &workload{dyn: dyn.Resource(kopfExamples).Namespace(ns), tracker: tr, n: o.N, concurrency: o.Concurrency,
		timeout: o.Timeout, check: alive}
	cpu0, coord0, err := measure(children, logs)
	if err != nil {
		return res, err
	}
	for k := range phaseCount {
		ph, err := w.runPhase(ctx, k)
		if err != nil {
			return res, err
		}
		res.Seconds += ph.Seconds
		progress("%d replicas: %s phase %.1fs", r, ph.Name, ph.Seconds)
	}
	cpu1, coord1, err := measure(children, logs)
	if err != nil {
		return res, err
	}
	for i := range children {
		res.CPUPerChangeMs = append(res.CPUPerChangeMs, float64((cpu1[i]-cpu0[i]).Microseconds())/1000/float64(res.Changes))
		res.Coordination += coord1[i] - coord0[i]
	}
	return res, nil
}

var coordinationTotal = regexp.MustCompile(`msg="coordination requests" total=(\d+)`)

// measure reads each replica's CPU time and the last coordination request
// total its log shows.
func measure(children []*child, logs []string) ([]time.Duration, []int64, error) {
	var cpus []time.Duration
	var coords []int64
	for i, c := range children {
		cpu, err := procCPU(c.cmd.Process.Pid)
		if err != nil {
			return nil, nil, err
		}
		cpus = append(cpus, cpu)
		b, err := os.ReadFile(logs[i])
		if err != nil {
			return nil, nil, err
		}
		m := coordinationTotal.FindAllSubmatch(b, -1)
		if len(m) == 0 {
			return nil, nil, errors.New("no coordination requests in " + logs[i])
		}
		n, _ := strconv.ParseInt(string(m[len(m)-1][1]), 10, 64)
		coords = append(coords, n)
	}
	return cpus, coords, nil
}
