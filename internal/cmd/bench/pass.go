package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// passRun is one pass in progress: a contender's operator serving a fresh
// namespace, the workload on it, and what was measured so far. The
// scheduler (rounds.go) starts the passes of a round, runs their phases
// interleaved, and finishes them.
type passRun struct {
	d        *driver
	p        pass
	progress func(string, ...any)
	res      result
	child    *child
	w        *workload
	stopTrk  context.CancelFunc

	cpu0      time.Duration // the operator's CPU before the phases
	auditFrom int64         // where the audit log ended before the phases
	since     time.Time     // when the first phase began
	profiled  <-chan struct{}
}

// start creates the pass's namespace, starts following it, starts the
// contender's operator and waits until it handled the canary.
func (d *driver) start(ctx context.Context, p pass, progress func(string, ...any)) (*passRun, error) {
	r := &passRun{d: d, p: p, progress: progress, stopTrk: func() {}}
	r.res = result{Contender: p.Contender, Round: p.Round, N: d.o.N, Changes: 3 * d.o.N}
	r.res.Namespace = fmt.Sprintf("bench-%s-%d-%d", p.Contender, p.Round, time.Now().Unix())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.res.Namespace}}
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", r.res.Namespace, err)
	}
	trackCtx, stopTracking := context.WithCancel(ctx)
	r.stopTrk = stopTracking
	tr := newTracker(objectPrefix)
	if err := tr.run(trackCtx, d.dyn, r.res.Namespace); err != nil {
		r.abort()
		return nil, err
	}
	argv, err := d.argv(p, r.res.Namespace)
	if err != nil {
		r.abort()
		return nil, err
	}
	if r.child, err = startChild(argv, filepath.Join(d.o.WorkDir, p.fileName(".log"))); err != nil {
		r.abort()
		return nil, err
	}
	if err := r.ready(ctx, tr); err != nil {
		r.abort()
		return nil, err
	}
	return r, nil
}

// ready waits for the operator and its canary, and takes the measures the
// pass's figures start from.
func (r *passRun) ready(ctx context.Context, tr *tracker) error {
	d, startedAt := r.d, time.Now()
	if err := r.child.waitReady(d.o.ReadyTimeout); err != nil {
		return err
	}
	pid := r.child.cmd.Process.Pid
	r.w = &workload{dyn: d.dyn.Resource(kopfExamples).Namespace(r.res.Namespace), tracker: tr,
		n: d.o.N, concurrency: d.o.Concurrency, timeout: d.o.PhaseTimeout, check: r.child.alive,
		cpu: func(ctx context.Context) (cpuSample, error) { return d.cpu(ctx, pid) }}
	if err := r.w.canary(ctx, d.o.ReadyTimeout); err != nil {
		return err
	}
	r.res.ReadySeconds = time.Since(startedAt).Seconds()
	r.progress("%s: ready in %.1fs (canary handled)", r.p, r.res.ReadySeconds)
	var err error
	if r.cpu0, err = procCPU(pid); err != nil {
		return err
	}
	hwm0, err := procHWM(pid)
	if err != nil {
		return err
	}
	r.res.ReadyPeakRSSMB = float64(hwm0) / 1024
	// The audit log only grows (see auditLogFlags): the pass's writes are
	// after its current end.
	r.auditFrom, err = fileSize(d.auditLog)
	return err
}

// phase runs the pass's k-th phase.
func (r *passRun) phase(ctx context.Context, k int) error {
	d := r.d
	if k == 0 {
		r.since = time.Now()
		if d.o.CPUProfile && profiled(r.p.Contender) {
			_ = r.child.cmd.Process.Signal(syscall.SIGUSR1) // start profiling
		}
		r.profiled = d.profileAPIServer(ctx, r.p, r.progress)
	}
	ph, err := r.w.runPhase(ctx, k)
	if err != nil {
		return fmt.Errorf("%s: %w", r.p, err)
	}
	r.res.Phases = append(r.res.Phases, ph)
	r.progress("%s: %s phase %.2fs (requests sent in %.2fs)", r.p, ph.Name, ph.Seconds, ph.SentSeconds)
	return nil
}

// finish stops the operator and works out the pass's figures.
func (r *passRun) finish() (result, error) {
	defer r.stopTrk()
	if r.profiled != nil {
		<-r.profiled
	}
	d, res := r.d, r.res
	hwm, err := procHWM(r.child.cmd.Process.Pid)
	if err != nil {
		r.abort()
		return res, err
	}
	// Writes that trail the last phase (there should be none) are still
	// counted from the audit log, which is read after the operator stopped.
	time.Sleep(time.Second)
	u, err := r.child.stop(30 * time.Second)
	r.child = nil
	if err != nil {
		return res, err
	}
	during := phasesCPU(res.Phases) // the operator's and the API server's CPU in the phases
	res.StartupCPUSeconds = r.cpu0.Seconds()
	res.CPUSeconds = during.Operator
	res.TotalCPUSeconds = u.CPU.Seconds()
	res.CPUPerChangeMs = res.CPUSeconds * 1000 / float64(res.Changes)
	res.PeakRSSMB = float64(max(u.PeakRSSK, hwm)) / 1024

	ops, drv, err := d.countWrites(r.auditFrom, writeFilter{Namespace: res.Namespace, Since: r.since, Driver: driverAgent})
	if err != nil {
		return res, err
	}
	res.Writes, res.DriverWrites = ops, drv.Total
	res.WritesPerChange = float64(ops.Total) / float64(res.Changes)
	if drv.Total != res.Changes {
		r.progress("%s: warning: the audit log shows %d driver writes, want %d", r.p, drv.Total, res.Changes)
	}
	// The API server's write count during this pass's phases only (the
	// round's other passes run theirs in between).
	res.MetricsWrites = during.Writes - float64(res.Changes)
	res.APIServerCPUPerChangeMs = during.APIServer * 1000 / float64(res.Changes)
	r.progress("%s: %d operator writes (%s); metrics say %.0f", r.p, ops.Total, ops, res.MetricsWrites)
	return res, nil
}

// abort stops what the pass started, after a failure.
func (r *passRun) abort() {
	if r.child != nil {
		_, _ = r.child.stop(10 * time.Second)
		r.child = nil
	}
	r.stopTrk()
}
