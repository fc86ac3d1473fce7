package metrics

import (
	"context"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// client-go's REST client metrics, under the names Kubernetes' components
// and controller-runtime give them.
var (
	restRequests = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Number of HTTP requests, partitioned by status code, method, and host.",
	}, []string{"code", "method", "host"}))
	restLatency = mustRegister(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_request_duration_seconds",
		Help:    "Request latency in seconds. Broken down by verb and host.",
		Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0},
	}, []string{"verb", "host"}))
)

type restResult struct{}

func (restResult) Increment(_ context.Context, code, method, host string) {
	if !enabled.Load() {
		return
	}
	restRequests.WithLabelValues(code, method, host).Inc()
}

type restLatencyMetric struct{}

func (restLatencyMetric) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	if !enabled.Load() {
		return
	}
	restLatency.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}

func init() {
	clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: restResult{}, RequestLatency: restLatencyMetric{}})
}
