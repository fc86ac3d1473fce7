package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

var kopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// objectPrefix names the workload's objects; the canary has another name.
const (
	objectPrefix = "kex-"
	canaryName   = "canary"
)

// phaseResult is one phase's timing.
type phaseResult struct {
	Name string `json:"name"`
	// Seconds is from the first request sent until every object shows the
	// phase's result.
	Seconds float64 `json:"seconds"`
	// SentSeconds is from the first request sent until the driver's last
	// request returned: when close to Seconds, the operator kept up.
	SentSeconds float64 `json:"sent_seconds"`
	// CPU is what each process used during the phase.
	CPU cpuSample `json:"cpu"`
}

// cpuSample is CPU seconds used by the processes of a run: on two cores
// a phase's wall time follows their sum. Machine is the whole machine's
// busy time (/proc/stat), so that the time other processes took shows.
// Writes rides along from the same read of the API server's metrics: its
// count of write requests to KopfExamples and Events.
type cpuSample struct {
	Operator  float64 `json:"operator"`
	APIServer float64 `json:"apiserver"`
	Etcd      float64 `json:"etcd"`
	Driver    float64 `json:"driver"` // this process: the driver and its tracker
	Machine   float64 `json:"machine"`
	Writes    float64 `json:"-"`
}

// Others is the busy time of every other process on the machine.
func (a cpuSample) Others() float64 {
	return a.Machine - a.Operator - a.APIServer - a.Etcd - a.Driver
}

func (a cpuSample) sub(b cpuSample) cpuSample { return a.add(b.scale(-1)) }

func (a cpuSample) add(b cpuSample) cpuSample {
	return cpuSample{a.Operator + b.Operator, a.APIServer + b.APIServer, a.Etcd + b.Etcd, a.Driver + b.Driver,
		a.Machine + b.Machine, a.Writes + b.Writes}
}

func (a cpuSample) scale(f float64) cpuSample {
	return cpuSample{a.Operator * f, a.APIServer * f, a.Etcd * f, a.Driver * f, a.Machine * f, a.Writes * f}
}

// phasesCPU adds up the CPU the phases used.
func phasesCPU(phases []phaseResult) cpuSample {
	var sum cpuSample
	for _, p := range phases {
		sum = sum.add(p.CPU)
	}
	return sum
}

// workload drives the objects of one namespace.
type workload struct {
	dyn         dynamic.ResourceInterface
	tracker     *tracker
	n           int
	concurrency int
	timeout     time.Duration
	check       func() error // fails when the operator died
	// cpu reads the CPU seconds used so far by each process; nil measures
	// nothing.
	cpu func(context.Context) (cpuSample, error)
}

func objectName(i int) string { return fmt.Sprintf("%s%05d", objectPrefix, i) }

func example(name, field string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"field": field},
	}}
}

// phaseCount is the number of phases of the workload: create, update,
// delete.
const phaseCount = 3

// step is one phase of the workload: what the driver does to each object,
// and when the phase is done.
type step struct {
	name string
	do   func(ctx context.Context, name string) error
	done func(progress) bool
}

func (w *workload) steps() [phaseCount]step {
	return [phaseCount]step{
		{"create", func(ctx context.Context, name string) error {
			_, err := w.dyn.Create(ctx, example(name, "value-1"), metav1.CreateOptions{})
			return err
		}, func(p progress) bool { return p.Created >= w.n }},
		{"update", func(ctx context.Context, name string) error {
			_, err := w.dyn.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"field":"value-2"}}`), metav1.PatchOptions{})
			return err
		}, func(p progress) bool { return p.Updated >= w.n }},
		{"delete", func(ctx context.Context, name string) error {
			err := w.dyn.Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}, func(p progress) bool { return p.Objects == 0 }},
	}
}

// runPhase runs the k-th phase (from 0) over all objects; the phases must
// run in order.
func (w *workload) runPhase(ctx context.Context, k int) (phaseResult, error) {
	s := w.steps()[k]
	return w.phase(ctx, s.name, s.do, s.done)
}

// phase sends do for every object from w.concurrency goroutines and waits
// until done holds.
func (w *workload) phase(ctx context.Context, name string, do func(context.Context, string) error, done func(progress) bool) (phaseResult, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	cpu0, err := w.readCPU(ctx)
	if err != nil {
		return phaseResult{}, err
	}
	begin := time.Now()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		sent     = make(chan time.Duration, 1)
	)
	for range w.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= w.n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, objectName(i)); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("%s %s: %w", name, objectName(i), err); cancel() })
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		sent <- time.Since(begin)
	}()
	err = w.tracker.wait(ctx, done, w.check)
	elapsed := time.Since(begin)
	sentIn := <-sent
	if firstErr != nil {
		return phaseResult{}, firstErr
	}
	if err != nil {
		return phaseResult{}, fmt.Errorf("%s phase not done within %s: %w", name, w.timeout, err)
	}
	cpu1, err := w.readCPU(ctx)
	if err != nil {
		return phaseResult{}, err
	}
	return phaseResult{Name: name, Seconds: elapsed.Seconds(), SentSeconds: sentIn.Seconds(), CPU: cpu1.sub(cpu0)}, nil
}

func (w *workload) readCPU(ctx context.Context) (cpuSample, error) {
	if w.cpu == nil {
		return cpuSample{}, nil
	}
	return w.cpu(ctx)
}

// canary creates one object, waits until the operator handled it, deletes
// it and waits until it is gone: the operator is then watching and warm.
func (w *workload) canary(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := w.dyn.Create(ctx, example(canaryName, "canary"), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the canary: %w", err)
	}
	if err := w.waitObject(ctx, func(o *unstructured.Unstructured) bool { return o != nil && hasMessage(o, "create_fn") }); err != nil {
		return fmt.Errorf("the operator did not handle the canary within %s: %w", timeout, err)
	}
	if err := w.dyn.Delete(ctx, canaryName, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting the canary: %w", err)
	}
	if err := w.waitObject(ctx, func(o *unstructured.Unstructured) bool { return o == nil }); err != nil {
		return fmt.Errorf("the canary was not released within %s: %w", timeout, err)
	}
	return nil
}

func (w *workload) waitObject(ctx context.Context, ok func(*unstructured.Unstructured) bool) error {
	for {
		obj, err := w.dyn.Get(ctx, canaryName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			obj, err = nil, nil
		}
		if err != nil {
			return err
		}
		if ok(obj) {
			return nil
		}
		if err := w.check(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
