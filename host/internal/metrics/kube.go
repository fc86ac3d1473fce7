package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	apiRequests = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_api_requests_total",
		Help: "Requests to the Kubernetes API server, by verb (get, list, watch, create, update, patch, delete) and HTTP status code (\"error\" when no answer came).",
	}, []string{"verb", "code"}))
	watchStalled = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kopf_wasm_watch_stalled",
		Help: "1 while a watch stream is stalled (nothing, not even a bookmark, arrived within watching.inactivityTimeout) and not yet re-established, by resource and namespace (\"\" for all).",
	}, []string{"resource", "namespace"}))
	watchStalls = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_watch_stalls_total",
		Help: "Watch streams ended because they went silent, by resource and namespace (\"\" for all).",
	}, []string{"resource", "namespace"}))
)

// APIRequest reports a request to the API server; code is its HTTP status,
// 0 when no answer came.
func APIRequest(verb string, code int) {
	if !enabled.Load() {
		return
	}
	c := "error"
	if code > 0 {
		c = strconv.Itoa(code)
	}
	apiRequests.WithLabelValues(verb, c).Inc()
}

// WatchStalled reports that the watch of resource in namespace went
// silent (stalled true) or was re-established (false).
func WatchStalled(resource, namespace string, stalled bool) {
	if !enabled.Load() {
		return
	}
	if stalled {
		watchStalls.WithLabelValues(resource, namespace).Inc()
		watchStalled.WithLabelValues(resource, namespace).Set(1)
		return
	}
	watchStalled.WithLabelValues(resource, namespace).Set(0)
}
