package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	webhookRequests = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_webhook_requests_total",
		Help: "Admission and conversion reviews answered, by webhook path and HTTP status code.",
	}, []string{"webhook", "code"}))
	webhookLatency = mustRegister(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "controller_runtime_webhook_latency_seconds",
		Help:    "Time to answer an admission or conversion review, by webhook path.",
		Buckets: durationBuckets,
	}, []string{"webhook"}))
	webhookInFlight = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "controller_runtime_webhook_requests_in_flight",
		Help: "Admission and conversion reviews being answered, by webhook path.",
	}, []string{"webhook"}))
)

// WebhookStarted reports a review arriving on path; call the function it
// returns with the HTTP status code once answered.
func WebhookStarted(path string) (done func(code int)) {
	if !enabled.Load() {
		return func(int) {}
	}
	start := time.Now()
	g := webhookInFlight.WithLabelValues(path)
	g.Inc()
	return func(code int) {
		g.Dec()
		webhookRequests.WithLabelValues(path, strconv.Itoa(code)).Inc()
		webhookLatency.WithLabelValues(path).Observe(time.Since(start).Seconds())
	}
}
