package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The per-module bounds of settings.Isolation: what a module holds of the
// shared workers, how often it found them taken, how long its Kubernetes
// requests waited for its rate limit, and why its calls failed.
var (
	moduleWorkers = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kopf_wasm_module_workers",
		Help: "Workers running a processing cycle that calls a module's handlers now, by module (at most isolation.workers).",
	}, []string{"module"}))
	moduleDeferred = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_module_deferred_total",
		Help: "Processing cycles that skipped a module's handlers because it held its share of the workers (isolation.workers), by module.",
	}, []string{"module"}))
	moduleWaiting = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kopf_wasm_module_waiting_objects",
		Help: "Objects waiting for a module to free a worker of its share, by module.",
	}, []string{"module"}))
	moduleThrottled = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_module_requests_throttled_total",
		Help: "Kubernetes requests and Events of a module's handlers that waited for its rate limit (isolation.qps, isolation.burst), by module.",
	}, []string{"module"}))
	moduleThrottledSeconds = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_module_requests_throttled_seconds_total",
		Help: "Time a module's Kubernetes requests and Events waited for its rate limit, by module.",
	}, []string{"module"}))
	callFailures = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_call_failures_total",
		Help: "Handler calls the sandbox ended, by module and kind (timeout, trap, out-of-memory, exit, failed, bad-output, output-too-large, internal).",
	}, []string{"module", "kind"}))
)

// ModuleWorkers reports the workers now running cycles that call module.
func ModuleWorkers(module string, busy int) {
	if enabled.Load() {
		moduleWorkers.WithLabelValues(module).Set(float64(busy))
	}
}

// ModuleDeferred reports a cycle that skipped module's handlers because the
// module held its share, and the objects now waiting for it.
func ModuleDeferred(module string, waiting int) {
	if enabled.Load() {
		moduleDeferred.WithLabelValues(module).Inc()
		moduleWaiting.WithLabelValues(module).Set(float64(waiting))
	}
}

// ModuleWaiting reports the objects waiting for module to free a worker.
func ModuleWaiting(module string, waiting int) {
	if enabled.Load() {
		moduleWaiting.WithLabelValues(module).Set(float64(waiting))
	}
}

// ModuleThrottled reports a request of module's handlers that waited for
// the module's rate limit, and how long.
func ModuleThrottled(module string, waited time.Duration) {
	if enabled.Load() {
		moduleThrottled.WithLabelValues(module).Inc()
		moduleThrottledSeconds.WithLabelValues(module).Add(waited.Seconds())
	}
}

// CallFailed reports a handler call of module that the sandbox ended, by
// the failure's kind (wasmrt's Kind).
func CallFailed(module, kind string) {
	if enabled.Load() {
		callFailures.WithLabelValues(module, kind).Inc()
	}
}

// budgetCollector reads the modules' memory budgets from the module
// sources at each scrape (see AddModuleSource).
type budgetCollector struct{}

var (
	budgetBytesDesc = prometheus.NewDesc("kopf_wasm_module_memory_bytes",
		"Linear memory of all of a module's wasm instances, pooled and daemons', which its budget (isolation.memoryBytes) bounds, by module.", []string{"module"}, nil)
	budgetHitsDesc = prometheus.NewDesc("kopf_wasm_module_memory_budget_hits_total",
		"Memory growths and new instances of a module that its memory budget (isolation.memoryBytes) refused, by module (since the module version was loaded).", []string{"module"}, nil)
)

func (budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- budgetBytesDesc
	ch <- budgetHitsDesc
}

func (budgetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range moduleStats() {
		ch <- prometheus.MustNewConstMetric(budgetBytesDesc, prometheus.GaugeValue, float64(s.BudgetBytes), s.Module)
		ch <- prometheus.MustNewConstMetric(budgetHitsDesc, prometheus.CounterValue, float64(s.BudgetHits), s.Module)
	}
}

func init() { Registry.MustRegister(budgetCollector{}) }
