package metrics

import (
	"testing"
	"time"
)

// TestSetEnabled checks that with metrics off nothing is recorded and
// queues get no name (client-go then keeps no queue metrics), and that
// turning them on again records.
func TestSetEnabled(t *testing.T) {
	t.Cleanup(func() { SetEnabled(true) })
	value := func(name string, labels ...string) float64 {
		v, _ := Sample(name, labels...)
		return v
	}
	reports := []struct {
		name   string
		report func()
		metric string
		labels []string
	}{
		{"handler call", func() { HandlerCall("m-off", "h", OutcomeTemporary, time.Millisecond) },
			"kopf_wasm_handler_calls_total", []string{"module", "m-off"}},
		{"handler retry", func() { HandlerCall("m-off", "h", OutcomeTemporary, time.Millisecond) },
			"kopf_wasm_handler_retries_total", []string{"module", "m-off"}},
		{"cycle", func() { Reconcile("r-off", ResultError, time.Millisecond) }, "controller_runtime_reconcile_total", []string{"controller", "r-off"}},
		{"throttled", func() { Throttled("r-off", true) }, "kopf_wasm_objects_throttled_total", []string{"resource", "r-off"}},
		{"API request", func() { APIRequest("off-verb", 200) }, "kopf_wasm_api_requests_total", []string{"verb", "off-verb"}},
		{"stall", func() { WatchStalled("r-off", "ns", true) }, "kopf_wasm_watch_stalls_total", []string{"resource", "r-off"}},
		{"webhook", func() { WebhookStarted("/off")(200) }, "controller_runtime_webhook_requests_total", []string{"webhook", "/off"}},
		{"module load", func() { ModuleLoaded("m-off") }, "kopf_wasm_module_loads_total", []string{"module", "m-off"}},
		{"hand-over", ShardHandover, "kopf_wasm_shard_handovers_total", nil},
	}
	for _, tc := range reports {
		SetEnabled(false)
		before := value(tc.metric, tc.labels...)
		tc.report()
		if got := value(tc.metric, tc.labels...); got != before {
			t.Errorf("%s while off: %s %v -> %v, want unchanged", tc.name, tc.metric, before, got)
		}
		SetEnabled(true)
		tc.report()
		if got := value(tc.metric, tc.labels...); got != before+1 {
			t.Errorf("%s while on: %s %v -> %v, want one more", tc.name, tc.metric, before, got)
		}
	}
	SetEnabled(false)
	if got := QueueName("q"); got != "" || Enabled() {
		t.Errorf("off: QueueName %q, Enabled %v; want \"\" and false", got, Enabled())
	}
	if _, ok := (queueMetrics{}).NewAddsMetric("q").(noQueueMetric); !ok {
		t.Error("off: a named queue's adds metric is a Prometheus one, want none")
	}
	SetEnabled(true)
	if got := QueueName("q"); got != "q" {
		t.Errorf("on: QueueName %q, want q", got)
	}
}
