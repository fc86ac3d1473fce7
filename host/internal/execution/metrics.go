package execution

import (
	"errors"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// observe reports one call of h and its step to the metrics, and the
// sandbox's failure of the call (callErr), if any, by its kind.
func observe(h *registry.Handler, step Step, took time.Duration, callErr error) {
	metrics.HandlerCall(h.Module, h.ID(), outcome(step), took)
	if cerr := (*wasmrt.CallError)(nil); errors.As(callErr, &cerr) {
		metrics.CallFailed(h.Module, string(cerr.Kind))
	}
}

// outcome is the metrics' name of a step's outcome.
func outcome(step Step) string {
	var (
		ignored   *IgnoredError
		permanent *PermanentError
		timeout   *HandlerTimeoutError
		retries   *HandlerRetriesError
	)
	switch {
	case step.Err == nil:
		return metrics.OutcomeSuccess
	case errors.As(step.Err, &ignored):
		return metrics.OutcomeIgnored
	case errors.As(step.Err, &timeout):
		return metrics.OutcomeTimeout
	case errors.As(step.Err, &retries):
		return metrics.OutcomeRetries
	case errors.As(step.Err, &permanent):
		return metrics.OutcomePermanent
	}
	return metrics.OutcomeTemporary
}
