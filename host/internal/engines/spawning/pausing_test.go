package spawning_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// Pause stops a daemon with the reason "pausing" and spawns nothing until
// Resume; then the object's next Adjust starts it again.
func TestPauseStopsDaemonsUntilResume(t *testing.T) {
	var reason atomic.Value
	f := newFixture(t, func(ctx context.Context, _ *abi.Request, host wasmrt.Host) (*abi.Response, error) {
		r := host.SleepUntilStopped(ctx, time.Hour)
		reason.Store(r.Reason)
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
	})
	h := handler(t, abi.HandlerSpec{ID: "watch", Kind: abi.KindDaemon})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	f.settle(t, 1)
	f.spawner.Pause()
	select {
	case <-f.woken:
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon did not stop when paused")
	}
	if reason.Load() != spawning.ReasonPausing {
		t.Errorf("stop reason %v, want %q", reason.Load(), spawning.ReasonPausing)
	}
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, false)
	if n := f.spawner.Running(key); n != 0 {
		t.Fatalf("%d workers spawned while paused", n)
	}
	f.spawner.Resume()
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, false)
	if n := f.spawner.Running(key); n != 1 {
		t.Fatalf("%d workers after the resume, want 1", n)
	}
	f.settle(t, 2)
}
