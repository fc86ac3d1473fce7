package metrics

import (
	"slices"
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

// TestHold: hosts of one process that hold the metrics record them while
// one of them serves them, whatever the order they start and stop in; with
// no host, SetEnabled decides.
func TestHold(t *testing.T) {
	t.Cleanup(func() { SetEnabled(true) })
	tests := []struct {
		name  string
		base  bool
		holds []bool // the hosts, each serving or not
		after int    // how many of them have stopped (first ones first)
		want  bool
	}{
		{name: "no host, on", base: true, want: true},
		{name: "no host, off", base: false, want: false},
		{name: "one host serving none", base: true, holds: []bool{false}, want: false},
		{name: "one host serving", base: false, holds: []bool{true}, want: true},
		{name: "one serving, one not", base: true, holds: []bool{true, false}, want: true},
		{name: "one not, one serving", base: true, holds: []bool{false, true}, want: true},
		{name: "the serving host stopped", base: true, holds: []bool{true, false}, after: 1, want: false},
		{name: "every host stopped", base: true, holds: []bool{false, false}, after: 2, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			SetEnabled(tt.base)
			var releases []func()
			for _, serves := range tt.holds {
				releases = append(releases, Hold(serves))
			}
			for _, release := range releases[:tt.after] {
				release()
				release() // twice is once
			}
			if got := Enabled(); got != tt.want {
				t.Errorf("Enabled() = %v, want %v", got, tt.want)
			}
			for _, release := range releases[tt.after:] {
				release()
			}
		})
	}
}

// TestModuleSources: the figures of two hosts' module sets are summed by
// module, and a removed source no longer counts.
func TestModuleSources(t *testing.T) {
	a := AddModuleSource(func() []ModuleStats { return []ModuleStats{{Module: "m", Instances: 1, MemoryBytes: 10}} })
	b := AddModuleSource(func() []ModuleStats {
		return []ModuleStats{{Module: "m", Instances: 2, MemoryBytes: 20}, {Module: "n", Instances: 1}}
	})
	got := moduleStats()
	want := []ModuleStats{{Module: "m", Instances: 3, MemoryBytes: 30}, {Module: "n", Instances: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("two sources: %+v, want %+v", got, want)
	}
	b()
	a()
	if got := moduleStats(); len(got) != 0 {
		t.Errorf("no sources: %+v, want none", got)
	}
}
