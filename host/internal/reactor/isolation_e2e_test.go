package reactor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// TestFairness runs two modules in one host: hog, whose handlers loop,
// sleep, flood the API server or fail on every ConfigMap (with a call
// timeout of 10 minutes, so a looping call holds its worker for the whole
// test), and kopfexample, with 1,000 objects to create. The host has 4
// workers and gives a module at most 2 (isolation.workers). Without the
// share the hog's calls would hold every worker and no kopfexample would
// be handled before the test gives up; with it, every kopfexample is
// handled while the hog still holds its 2 workers and its other objects
// wait, and the hog's metrics say so: 2 workers busy, cycles deferred,
// objects waiting, requests throttled by its rate limit (isolation.qps).
// Nothing here depends on the machine's speed: the hog's calls last far
// longer than the test may.
func TestFairness(t *testing.T) {
	c := startCluster(t)
	const ns = "fair"
	createNamespace(t, c, ns)
	set := testSettings()
	set.Execution.Workers = 4
	set.Isolation.Workers = 2
	set.Isolation.QPS, set.Isolation.Burst = 5, 5

	patient, err := wasmrt.New(wasmrt.Options{Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = patient.Close(context.Background()) })
	hog := load(t, patient, "hog", "testguests/hog")
	good := load(t, newRuntime(t), "kopfexample", "kopfexample")
	kc := newKube(t, c)
	op := run(t, kc, newOperator(t, kc, ns, set, hog, good))

	// The hog takes its share: a loop and a flood of requests.
	createConfigMap(t, c, ns, "loop", "loop")
	createConfigMap(t, c, ns, "flood", "flood")
	e2etest.Eventually(t, 2*time.Minute, "the hog holds its share", func() error {
		if s := op.Shares("hog"); s.Busy != 2 {
			return fmt.Errorf("the hog holds %d workers (%+v), want 2", s.Busy, s)
		}
		return nil
	})
	// Its other objects wait for it, whatever they would do.
	for _, mode := range []string{"sleep", "fail", "grow", "loop"} {
		createConfigMap(t, c, ns, "more-"+mode, mode)
	}

	const n = 1000
	createExamples(t, c, ns, n)
	e2etest.Eventually(t, 5*time.Minute, fmt.Sprintf("all %d kopfexamples handled", n), func() error {
		if got := handledExamples(t, c, ns); got < n {
			return fmt.Errorf("%d of %d handled; hog: %+v", got, n, op.Shares("hog"))
		}
		return nil
	})

	s := op.Shares("hog")
	if s.Busy != 2 || s.Limit != 2 || s.Waiting < 4 || s.Deferred < 4 {
		t.Errorf("hog after the kopfexamples: %+v; want its 2 workers busy and its 4 other objects waiting", s)
	}
	for _, m := range []struct {
		name string
		min  float64
	}{
		{"kopf_wasm_module_workers", 2},
		{"kopf_wasm_module_deferred_total", 4},
		{"kopf_wasm_module_waiting_objects", 4},
		{"kopf_wasm_module_requests_throttled_total", 1},
	} {
		if got := metricValue(t, m.name, map[string]string{"module": "hog"}); got < m.min {
			t.Errorf("%s{module=hog} = %v, want at least %v", m.name, got, m.min)
		}
	}
	if got := metricValue(t, "kopf_wasm_handler_calls_total", map[string]string{"module": "kopfexample", "handler": "create_fn", "outcome": "success"}); got < n {
		t.Errorf("kopfexample's create_fn succeeded %v times, want %d", got, n)
	}
}

// createConfigMap creates a ConfigMap labelled for one of the hog's
// handlers.
func createConfigMap(t *testing.T, c *cluster, ns, name, mode string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"hog": mode}}}}
	if _, err := c.dyn.Resource(configmaps).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createExamples creates n kopfexamples, 8 at a time.
func createExamples(t *testing.T, c *cluster, ns string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				obj := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
					"metadata": map[string]any{"name": fmt.Sprintf("good-%04d", i)}, "spec": map[string]any{"field": "x"}}}
				if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// handledExamples counts the kopfexamples whose create handler succeeded.
func handledExamples(t *testing.T, c *cluster, ns string) int {
	t.Helper()
	list, err := c.dyn.Resource(kopfexamples).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	handled := 0
	for _, obj := range list.Items {
		if statusMessage(&obj, "create_fn") == "hello world" {
			handled++
		}
	}
	return handled
}

// metricValue is the value of the metric name with labels (a counter or
// a gauge) in the host's registry; 0 when there is none.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}
