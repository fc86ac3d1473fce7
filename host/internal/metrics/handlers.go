package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a handler call, the outcome label of
// kopf_wasm_handler_calls_total.
const (
	OutcomeSuccess   = "success"   // the handler succeeded
	OutcomeTemporary = "temporary" // it will be retried (a temporary or arbitrary error)
	OutcomePermanent = "permanent" // it failed for good (a permanent error)
	OutcomeTimeout   = "timeout"   // it failed: its timeout passed
	OutcomeRetries   = "retries"   // it failed: its retries were used up
	OutcomeIgnored   = "ignored"   // it failed, and its errors mode ignores that
)

var (
	handlerCalls = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_handler_calls_total",
		Help: "Handler calls by module, handler id and outcome (success, temporary, permanent, timeout, retries, ignored).",
	}, []string{"module", "handler", "outcome"}))
	handlerDuration = mustRegister(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kopf_wasm_handler_duration_seconds",
		Help:    "Time of one handler call, from the request's encoding to the response's decoding, by module and handler id.",
		Buckets: durationBuckets,
	}, []string{"module", "handler"}))
	handlerRetries = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_handler_retries_total",
		Help: "Handler calls that ended in a retry being scheduled, by module and handler id.",
	}, []string{"module", "handler"}))
)

// HandlerCall reports one call of a handler: its outcome (one of the
// Outcome constants) and how long the call took (0 when the handler was
// not called because a limit was reached).
func HandlerCall(module, handler, outcome string, took time.Duration) {
	if !enabled.Load() {
		return
	}
	handlerCalls.WithLabelValues(module, handler, outcome).Inc()
	if took > 0 {
		handlerDuration.WithLabelValues(module, handler).Observe(took.Seconds())
	}
	if outcome == OutcomeTemporary {
		handlerRetries.WithLabelValues(module, handler).Inc()
	}
}
