package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// driverAgent is the user agent of the benchmark's own requests, by which
// the audit count tells them from the operator's.
const driverAgent = "kopf-wasm-bench-driver"

// driver runs the workload against one contender after another.
type driver struct {
	o          benchOptions
	kubeconfig string
	auditLog   string
	dyn        dynamic.Interface
	cs         kubernetes.Interface
}

func newDriver(env *testenv.Env, auditLog string, o benchOptions) (*driver, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1 // no client-side limit: the driver must not be the bottleneck
	cfg.UserAgent = driverAgent
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("driver client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("driver client: %w", err)
	}
	return &driver{o: o, kubeconfig: env.Kubeconfig, auditLog: auditLog, dyn: dyn, cs: cs}, nil
}

func (d *driver) serverVersion(ctx context.Context) string {
	v, err := d.cs.Discovery().ServerVersion()
	if err != nil {
		return "unknown"
	}
	return "kube-apiserver " + v.GitVersion
}

// argv is the command line of a pass's operator.
func (d *driver) argv(p pass, namespace string) ([]string, error) {
	common := []string{"-kubeconfig", d.kubeconfig, "-namespace", namespace, "-log-level", d.o.LogLevel}
	if d.o.CPUProfile {
		common = append(common, "-cpuprofile", filepath.Join(d.o.WorkDir, p.fileName(".cpu.pprof")))
	}
	switch name := p.Contender; name {
	case "kopf-wasm":
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.WasmModule, "-user-agent", "kopf-wasm-bench"), nil
	case "kopf-wasm-patch":
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.WasmModule, "-user-agent", "kopf-wasm-patch-bench",
			"-writes", string(settings.WritePatch)), nil
	case "native":
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this binary to re-execute it: %w", err)
		}
		return append(append([]string{self, operatorCommand}, common...),
			"-workers", fmt.Sprint(d.o.NativeWorkers), "-user-agent", "native-bench"), nil
	}
	return nil, fmt.Errorf("unknown contender %q", p.Contender)
}

// run measures one pass of a contender in a fresh namespace.
func (d *driver) run(ctx context.Context, p pass, progress func(string, ...any)) (result, error) {
	name := p.String()
	res := result{Contender: p.Contender, Round: p.Round, N: d.o.N, Changes: 3 * d.o.N}
	res.Namespace = fmt.Sprintf("bench-%s-%d-%d", p.Contender, p.Round, time.Now().Unix())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: res.Namespace}}
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("creating namespace %s: %w", res.Namespace, err)
	}
	trackCtx, stopTracking := context.WithCancel(ctx)
	defer stopTracking()
	tr := newTracker(objectPrefix)
	if err := tr.run(trackCtx, d.dyn, res.Namespace); err != nil {
		return res, err
	}

	argv, err := d.argv(p, res.Namespace)
	if err != nil {
		return res, err
	}
	c, err := startChild(argv, filepath.Join(d.o.WorkDir, p.fileName(".log")))
	if err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = c.stop(10 * time.Second)
		}
	}()
	startedAt := time.Now()
	if err := c.waitReady(d.o.ReadyTimeout); err != nil {
		return res, err
	}
	w := &workload{dyn: d.dyn.Resource(kopfExamples).Namespace(res.Namespace), tracker: tr,
		n: d.o.N, concurrency: d.o.Concurrency, timeout: d.o.PhaseTimeout, check: c.alive,
		cpu: func(ctx context.Context) (cpuSample, error) { return d.cpu(ctx, c.cmd.Process.Pid) }}
	if err := w.canary(ctx, d.o.ReadyTimeout); err != nil {
		return res, err
	}
	res.ReadySeconds = time.Since(startedAt).Seconds()
	progress("%s: ready in %.1fs (canary handled); running the phases", name, res.ReadySeconds)

	pid := c.cmd.Process.Pid
	cpu0, err := procCPU(pid)
	if err != nil {
		return res, err
	}
	hwm0, err := procHWM(pid)
	if err != nil {
		return res, err
	}
	res.ReadyPeakRSSMB = float64(hwm0) / 1024
	// The audit log only grows (see auditLogFlags): the pass's writes are
	// after its current end.
	auditFrom, err := fileSize(d.auditLog)
	if err != nil {
		return res, err
	}
	m0, err := d.scrape(ctx)
	if err != nil {
		return res, err
	}
	if d.o.CPUProfile {
		_ = c.cmd.Process.Signal(syscall.SIGUSR1) // start profiling
	}
	profiled := d.profileAPIServer(ctx, p, progress)
	defer func() { <-profiled }()
	since := time.Now()
	res.Phases, err = w.phases(ctx)
	if err != nil {
		return res, err
	}
	for _, p := range res.Phases {
		progress("%s: %s phase %.2fs (requests sent in %.2fs)", name, p.Name, p.Seconds, p.SentSeconds)
	}
	hwm, err := procHWM(pid)
	if err != nil {
		return res, err
	}
	m1, err := d.scrape(ctx)
	if err != nil {
		return res, err
	}
	// Writes that trail the last phase (there should be none) are still
	// counted from the audit log, which is read after the operator stopped.
	time.Sleep(time.Second)
	stopped = true
	u, err := c.stop(30 * time.Second)
	if err != nil {
		return res, err
	}

	during := phasesCPU(res.Phases) // the operator's and the API server's CPU in the phases
	res.StartupCPUSeconds = cpu0.Seconds()
	res.CPUSeconds = during.Operator
	res.TotalCPUSeconds = u.CPU.Seconds()
	res.CPUPerChangeMs = res.CPUSeconds * 1000 / float64(res.Changes)
	res.PeakRSSMB = float64(max(u.PeakRSSK, hwm)) / 1024

	ops, drv, err := d.countWrites(auditFrom, writeFilter{Namespace: res.Namespace, Since: since, Driver: driverAgent})
	if err != nil {
		return res, err
	}
	res.Writes, res.DriverWrites = ops, drv.Total
	res.WritesPerChange = float64(ops.Total) / float64(res.Changes)
	if drv.Total != res.Changes {
		progress("%s: warning: the audit log shows %d driver writes, want %d", name, drv.Total, res.Changes)
	}
	res.MetricsWrites = writeRequests(m1, "kopfexamples", "events") - writeRequests(m0, "kopfexamples", "events") - float64(res.Changes)
	res.APIServerCPUPerChangeMs = during.APIServer * 1000 / float64(res.Changes)
	progress("%s: %d operator writes (%s); metrics say %.0f", name, ops.Total, ops, res.MetricsWrites)
	return res, nil
}

// profileAPIServer fetches a CPU profile of the API server covering the
// next -apiserver-profile of time into the work folder; the channel closes
// when it is written (at once when not asked for).
func (d *driver) profileAPIServer(ctx context.Context, p pass, progress func(string, ...any)) <-chan struct{} {
	done := make(chan struct{})
	if d.o.APIServerProfile <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		seconds := int(d.o.APIServerProfile.Round(time.Second).Seconds())
		raw, err := d.cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", fmt.Sprint(max(seconds, 1))).Timeout(d.o.APIServerProfile + time.Minute).DoRaw(ctx)
		path := filepath.Join(d.o.WorkDir, p.fileName("-apiserver.cpu.pprof"))
		if err == nil {
			err = os.WriteFile(path, raw, 0o644)
		}
		if err != nil {
			progress("%s: profiling the API server: %v", p, err)
		}
	}()
	return done
}

// countWrites counts the writes in the audit log from offset on.
func (d *driver) countWrites(offset int64, f writeFilter) (others, driver writeCount, err error) {
	file, err := os.Open(d.auditLog)
	if err != nil {
		return others, driver, fmt.Errorf("reading the audit log: %w", err)
	}
	defer file.Close()
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		return others, driver, fmt.Errorf("reading the audit log: %w", err)
	}
	return countWrites(bufio.NewReaderSize(file, 1<<20), f)
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("the audit log: %w", err)
	}
	return st.Size(), nil
}

// cpu reads the CPU time used so far by the operator (pid), the API
// server (its metrics), etcd (a child of this process), this process and
// the whole machine.
func (d *driver) cpu(ctx context.Context, pid int) (cpuSample, error) {
	var s cpuSample
	op, err := procCPU(pid)
	if err != nil {
		return s, err
	}
	self, err := procCPU(os.Getpid())
	if err != nil {
		return s, err
	}
	s.Operator, s.Driver = op.Seconds(), self.Seconds()
	if busy, err := machineBusy(); err == nil {
		s.Machine = busy.Seconds()
	}
	if etcd, err := childNamed("etcd"); err == nil {
		if t, err := procCPU(etcd); err == nil {
			s.Etcd = t.Seconds()
		}
	}
	m, err := d.scrape(ctx)
	if err != nil {
		return s, err
	}
	s.APIServer = metricValue(m, "process_cpu_seconds_total")
	return s, nil
}

// scrape reads the API server's metrics.
func (d *driver) scrape(ctx context.Context) ([]sample, error) {
	raw, err := d.cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return parseMetrics(bytes.NewReader(raw))
}
