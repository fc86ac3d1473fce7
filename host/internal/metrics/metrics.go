package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every metric of the host, and the Go runtime's and the
// process's.
var Registry = prometheus.NewRegistry()

// Handler serves [Registry] in Prometheus' text (or OpenMetrics) format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// durationBuckets are the buckets of the duration histograms, in seconds:
// from a fast handler call (tens of microseconds) to a call timeout.
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// mustRegister registers the collectors with Registry and returns the first.
func mustRegister[C prometheus.Collector](c C, more ...prometheus.Collector) C {
	Registry.MustRegister(c)
	Registry.MustRegister(more...)
	return c
}

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}
