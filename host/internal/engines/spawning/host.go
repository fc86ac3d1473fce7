package spawning

import (
	"context"
	"time"

	"k8s.io/utils/clock"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// stopHost serves a timer's or daemon's stop functions on top of the
// reactor's host functions.
type stopHost struct {
	wasmrt.Host
	w     *worker
	clock clock.Clock
}

// SleepUntilStopped sleeps d, returning early when the worker is asked to
// stop.
func (h *stopHost) SleepUntilStopped(ctx context.Context, d time.Duration) abi.SleepResponse {
	t := h.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-h.w.stopping:
	case <-ctx.Done():
	}
	return h.IsStopped(ctx)
}

// IsStopped tells whether the worker is asked to stop, and why.
func (h *stopHost) IsStopped(context.Context) abi.SleepResponse {
	reason := h.w.stopReason()
	return abi.SleepResponse{Stopped: reason != "", Reason: reason}
}
