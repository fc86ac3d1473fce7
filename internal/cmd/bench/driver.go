package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

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
	if d.o.scale() {
		common = append(common, "-report-progress")
	}
	if d.o.PeakSnapshots && p.Contender != kopfContender {
		common = append(common, "-peak-dir", filepath.Join(d.o.WorkDir, p.fileName("-peak")))
	}
	switch name := p.Contender; name {
	case "kopf-wasm":
		if d.o.scale() || d.o.WasmCache { // restarts load the module as kopf-wasm run does, from its compile cache
			common = append(common, "-cache-dir", filepath.Join(d.o.WorkDir, "wasm-cache"))
		}
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.WasmModule, "-user-agent", "kopf-wasm-bench"), nil
	case baselineContender: // the same, run by a benchoperator of another commit
		if d.o.scale() || d.o.WasmCache {
			common = append(common, "-cache-dir", filepath.Join(d.o.WorkDir, "wasm-cache-baseline"))
		}
		return append(append([]string{d.o.BaselineOperator}, common...), "-wasm", d.o.WasmModule, "-user-agent", "kopf-wasm-bench"), nil
	case "kopf-wasm-scraped": // its metrics read every 5 s, as Prometheus would
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.WasmModule, "-user-agent", "kopf-wasm-bench",
			"-scrape-every", "5s"), nil
	case "kopf-wasm-nometrics": // no metrics recorded, as kopf-wasm run without --metrics-bind-address
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.WasmModule, "-user-agent", "kopf-wasm-bench",
			"-metrics=false"), nil
	case pythonContender:
		if d.o.WasmCache {
			common = append(common, "-cache-dir", filepath.Join(d.o.WorkDir, "wasm-cache"))
		}
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.PythonModule, "-user-agent", "kopf-wasm-bench"), nil
	case tinygoContender:
		if d.o.WasmCache {
			common = append(common, "-cache-dir", filepath.Join(d.o.WorkDir, "wasm-cache"))
		}
		return append(append([]string{d.o.WasmOperator}, common...), "-wasm", d.o.TinyGoModule, "-user-agent", "kopf-wasm-bench"), nil
	case kopfContender:
		return d.kopfArgv(namespace), nil
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
	s.Writes = writeRequests(m, "kopfexamples", "events")
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
