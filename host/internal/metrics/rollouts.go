package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	rolloutCalls = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_rollout_calls_total",
		Help: "Handler calls of modules with a canary or a shadow version, by module and version (stable, canary, shadow).",
	}, []string{"module", "version"}))
	rolloutErrors = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_rollout_errors_total",
		Help: "Of those, the calls that failed or did not succeed, by module and version.",
	}, []string{"module", "version"}))
	rolloutObjects = mustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kopf_wasm_rollout_objects",
		Help: "Watched objects each version of a module with a canary handles, by module and version (stable, canary).",
	}, []string{"module", "version"}))
	shadowDifferences = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_shadow_differences_total",
		Help: "Shadow calls whose error, outcome, result or patch differed from the serving version's, by module.",
	}, []string{"module"}))
	shadowSkipped = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_shadow_skipped_total",
		Help: "Calls not shadowed because rollouts.shadowConcurrency shadow calls were in flight, by module.",
	}, []string{"module"}))
)

// RolloutCall reports a call of one version of a module in a rollout.
func RolloutCall(module, version string, failed bool) {
	if !enabled.Load() {
		return
	}
	rolloutCalls.WithLabelValues(module, version).Inc()
	if failed {
		rolloutErrors.WithLabelValues(module, version).Inc()
	}
}

// RolloutObjects sets how many watched objects a version handles.
func RolloutObjects(module, version string, n int) {
	if enabled.Load() {
		rolloutObjects.WithLabelValues(module, version).Set(float64(n))
	}
}

// ShadowDiffered reports a shadow call that answered otherwise.
func ShadowDiffered(module string) {
	if enabled.Load() {
		shadowDifferences.WithLabelValues(module).Inc()
	}
}

// ShadowSkipped reports a call that was not shadowed.
func ShadowSkipped(module string) {
	if enabled.Load() {
		shadowSkipped.WithLabelValues(module).Inc()
	}
}
