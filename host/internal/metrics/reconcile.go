package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Results of a processing cycle, the result label of
// controller_runtime_reconcile_total (controller-runtime's values).
const (
	ResultSuccess      = "success"       // done, nothing scheduled
	ResultError        = "error"         // failed: the object is throttled
	ResultRequeue      = "requeue"       // processed again at once
	ResultRequeueAfter = "requeue_after" // processed again after a delay (a retry, a timer)
)

var (
	reconcileTotal = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Processing cycles by resource (controller) and result (success, error, requeue, requeue_after).",
	}, []string{"controller", "result"}))
	reconcileErrors = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_errors_total",
		Help: "Processing cycles that failed (framework or API errors, not handler errors), by resource (controller).",
	}, []string{"controller"}))
	reconcileTime = mustRegister(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "controller_runtime_reconcile_time_seconds",
		Help:    "Time of one processing cycle, by resource (controller).",
		Buckets: durationBuckets,
	}, []string{"controller"}))
	throttled = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_objects_throttled_total",
		Help: "Times an object was throttled after a failed processing cycle (Kopf's error delays), by resource.",
	}, []string{"resource"}))
	throttledNow = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kopf_wasm_objects_throttled",
		Help: "Objects throttled now (their last processing cycle failed), by resource.",
	}, []string{"resource"}))
)

// Reconcile reports one processing cycle of an object of resource: its
// result (one of the Result constants) and how long it took.
func Reconcile(resource, result string, took time.Duration) {
	if !enabled.Load() {
		return
	}
	reconcileTotal.WithLabelValues(resource, result).Inc()
	reconcileTime.WithLabelValues(resource).Observe(took.Seconds())
	if result == ResultError {
		reconcileErrors.WithLabelValues(resource).Inc()
	}
}

// Throttled reports that an object of resource was throttled; first says
// it was not throttled before.
func Throttled(resource string, first bool) {
	if !enabled.Load() {
		return
	}
	throttled.WithLabelValues(resource).Inc()
	if first {
		throttledNow.WithLabelValues(resource).Inc()
	}
}

// Unthrottled reports that a throttled object of resource was processed
// again successfully, or is gone.
func Unthrottled(resource string) {
	if enabled.Load() {
		throttledNow.WithLabelValues(resource).Dec()
	}
}
