package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// steadyResult is the steady scenario's figures: -rate changes per second
// for -duration on N handled objects, each a merge patch of spec.field
// with a value of its own.
type steadyResult struct {
	Rate     float64 `json:"rate"`
	Duration float64 `json:"duration_seconds"`
	// Sent is the changes sent; Handled those whose result the driver saw
	// within the drain time after the last one; Superseded those changed
	// again before their result came (not counted).
	Sent, Handled, Superseded int
	// Latency percentiles, milliseconds: from just before the driver sent
	// a patch until its watch delivered the object with the handler's
	// result for that patch's value.
	P50Ms, P90Ms, P99Ms, MaxMs float64
	// DriverLagMaxMs is the longest a patch was sent after its scheduled
	// time (the driver's own lateness; large values mean the rate was not
	// held).
	DriverLagMaxMs float64 `json:"driver_lag_max_ms"`
	// The operator's CPU and API writes per change, the API server's CPU
	// per change, over the sending and the drain.
	CPUPerChangeMs          float64    `json:"cpu_per_change_ms"`
	Writes                  writeCount `json:"writes"`
	WritesPerChange         float64    `json:"writes_per_change"`
	APIServerCPUPerChangeMs float64    `json:"apiserver_cpu_per_change_ms"`
	PeakRSSMB               float64    `json:"peak_rss_mb"`
}

// steadyDrain bounds the wait for the results of the last changes.
const steadyDrain = 2 * time.Minute

// steadyWorkers send the patches, so that a slow request does not hold
// the rate back.
const steadyWorkers = 32

// latencies records when each change was sent and when its result came.
type latencies struct {
	mu         sync.Mutex
	pending    map[string]sentChange
	took       []time.Duration
	superseded int
}

type sentChange struct {
	want string
	at   time.Time
}

func (l *latencies) sent(name, want string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.pending[name]; ok {
		l.superseded++
	}
	l.pending[name] = sentChange{want, at}
}

// observe is the tracker's hook: an object the watch delivered.
func (l *latencies) observe(name string, obj *unstructured.Unstructured) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.pending[name]
	if !ok || !handledValue(obj, s.want) {
		return
	}
	l.took = append(l.took, now.Sub(s.at))
	delete(l.pending, name)
}

func (l *latencies) left() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// handledValue reports whether obj shows the result of the change that
// set spec.field to want: for kopf-wasm, the diff-base (Kopf's
// last-handled-configuration, in the status or an annotation) holds that
// value; for the native controller, status.observedGeneration reached the
// generation and spec.field is want.
func handledValue(obj *unstructured.Unstructured, want string) bool {
	needle := `"field":"` + want + `"`
	if base, _, _ := unstructured.NestedString(obj.Object, "status", "kopf", "last-handled-configuration"); strings.Contains(base, needle) {
		return true
	}
	for k, v := range obj.GetAnnotations() {
		if strings.HasSuffix(k, "/last-handled-configuration") && strings.Contains(v, needle) {
			return true
		}
	}
	field, _, _ := unstructured.NestedString(obj.Object, "spec", "field")
	observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return found && field == want && observed >= obj.GetGeneration()
}

// steady runs the steady scenario on the pass's running operator.
func (r *passRun) steady(ctx context.Context) (steadyResult, error) {
	d := r.d
	res := steadyResult{Rate: d.o.Rate, Duration: d.o.Duration.Seconds()}
	lat := &latencies{pending: map[string]sentChange{}}
	hook := lat.observe
	r.w.tracker.hook.Store(&hook)
	defer r.w.tracker.hook.Store(nil)
	pid := r.child.cmd.Process.Pid
	auditFrom, err := fileSize(d.auditLog)
	if err != nil {
		return res, err
	}
	cpu0, err := d.cpu(ctx, pid)
	if err != nil {
		return res, err
	}
	since := time.Now()
	r.progress("%s: steady: %.0f changes/s for %s", r.p.Contender, d.o.Rate, d.o.Duration)
	sent, lag, err := r.sendSteady(ctx, lat)
	res.Sent, res.DriverLagMaxMs = sent, ms(lag)
	if err != nil {
		return res, err
	}
	deadline := time.Now().Add(steadyDrain)
	for lat.left() > 0 && time.Now().Before(deadline) {
		if err := r.child.alive(); err != nil {
			return res, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	cpu1, err := d.cpu(ctx, pid)
	if err != nil {
		return res, err
	}
	hwm, err := procHWM(pid)
	if err != nil {
		return res, err
	}
	res.PeakRSSMB = float64(hwm) / 1024
	ops, _, err := d.countWrites(auditFrom, writeFilter{Namespace: r.res.Namespace, Since: since, Driver: driverAgent})
	if err != nil {
		return res, err
	}
	lat.mu.Lock()
	took := slices.Clone(lat.took)
	res.Superseded = lat.superseded
	lat.mu.Unlock()
	res.Handled = len(took)
	sorted := make([]float64, len(took))
	for i, t := range took {
		sorted[i] = ms(t)
	}
	slices.Sort(sorted)
	res.P50Ms, res.P90Ms, res.P99Ms, res.MaxMs = percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 99), percentile(sorted, 100)
	used := cpu1.sub(cpu0)
	res.Writes = ops
	if sent > 0 {
		res.CPUPerChangeMs = used.Operator * 1000 / float64(sent)
		res.APIServerCPUPerChangeMs = used.APIServer * 1000 / float64(sent)
		res.WritesPerChange = float64(ops.Total) / float64(sent)
	}
	r.progress("%s: steady: %d sent, %d handled, p50 %.0f ms, p99 %.0f ms, max %.0f ms; %d writes (%s)",
		r.p.Contender, res.Sent, res.Handled, res.P50Ms, res.P99Ms, res.MaxMs, ops.Total, ops)
	return res, nil
}

// sendSteady patches one object after another at d.o.Rate for
// d.o.Duration and returns how many it sent and its longest lag behind
// the schedule.
func (r *passRun) sendSteady(ctx context.Context, lat *latencies) (int, time.Duration, error) {
	d := r.d
	type job struct {
		k  int
		at time.Time
	}
	jobs := make(chan job, 4*steadyWorkers)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		maxLag   time.Duration
		firstErr error
	)
	for range steadyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				name, want := objectName(j.k%d.o.N), fmt.Sprintf("s-%d", j.k)
				now := time.Now()
				lat.sent(name, want, now)
				patch := fmt.Sprintf(`{"spec":{"field":%q}}`, want)
				_, err := r.w.dyn.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				mu.Lock()
				maxLag = max(maxLag, now.Sub(j.at))
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("steady: patching %s: %w", name, err)
				}
				mu.Unlock()
			}
		}()
	}
	begin := time.Now()
	total := int(d.o.Rate * d.o.Duration.Seconds())
	k := 0
	for ; k < total && ctx.Err() == nil; k++ {
		at := begin.Add(time.Duration(float64(k) / d.o.Rate * float64(time.Second)))
		if wait := time.Until(at); wait > 0 {
			time.Sleep(wait)
		}
		jobs <- job{k, at}
	}
	close(jobs)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return k, maxLag, firstErr
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
