package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// The workqueue metrics under the names and labels controller-runtime gives
// them (name and controller both carry the queue's name).
var (
	wqLabels = []string{"controller", "name"}
	wqDepth  = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_depth", Help: "Current depth of the workqueue.",
	}, wqLabels))
	wqAdds = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "workqueue_adds_total", Help: "Total number of adds handled by the workqueue.",
	}, wqLabels))
	wqLatency = mustRegister(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "workqueue_queue_duration_seconds", Help: "How long in seconds an item stays in the workqueue before being requested.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
	}, wqLabels))
	wqWork = mustRegister(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "workqueue_work_duration_seconds", Help: "How long in seconds processing an item from the workqueue takes.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
	}, wqLabels))
	wqUnfinished = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_unfinished_work_seconds",
		Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration.",
	}, wqLabels))
	wqLongest = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_longest_running_processor_seconds",
		Help: "How many seconds has the longest running processor for workqueue been running.",
	}, wqLabels))
	wqRetries = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "workqueue_retries_total", Help: "Total number of retries handled by workqueue.",
	}, wqLabels))
)

// queueMetrics is client-go's workqueue.MetricsProvider over the vectors above.
type queueMetrics struct{}

func (queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqDepth.WithLabelValues(name, name)
}
func (queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqAdds.WithLabelValues(name, name)
}
func (queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqLatency.WithLabelValues(name, name)
}
func (queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqWork.WithLabelValues(name, name)
}
func (queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqUnfinished.WithLabelValues(name, name)
}
func (queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqLongest.WithLabelValues(name, name)
}
func (queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	if !enabled.Load() {
		return noQueueMetric{}
	}
	return wqRetries.WithLabelValues(name, name)
}

// noQueueMetric is every queue metric of a queue made while metrics are
// off (one named otherwise than through [QueueName]).
type noQueueMetric struct{}

func (noQueueMetric) Inc()            {}
func (noQueueMetric) Dec()            {}
func (noQueueMetric) Set(float64)     {}
func (noQueueMetric) Observe(float64) {}

func init() { workqueue.SetProvider(queueMetrics{}) }
