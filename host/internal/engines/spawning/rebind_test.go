package spawning_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestRebind moves an object from a module's stable version to its
// canary: the running timer stays on the version it started on until
// Rebind stops it; waiting between its runs, it ends at once, so Rebind
// counts nothing left running (the reactor's cycle goes on) and the object
// is woken; the object's next workers run on the canary.
func TestRebind(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	stable, canary := &module{run: ok}, &module{run: ok}
	var role atomic.Value
	role.Store("stable")
	exec := execution.New(execution.Options{
		Modules: func(string) execution.Module { return stable },
		Route: func(_ *registry.Handler, _, bound string) execution.Version {
			r := bound
			if r == "" {
				r = role.Load().(string)
			}
			if r == "canary" {
				return execution.Version{Module: canary, Role: r, Declared: true}
			}
			return execution.Version{Module: stable, Role: r, Declared: true}
		},
		Cluster: cluster{}, Settings: settings.Default(), Clock: clock,
	})
	woken := make(chan spawning.Key, 16)
	s := spawning.New(spawning.Options{Exec: exec, Modules: []string{"m"}, Wake: func(k spawning.Key) { woken <- k }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	obj := body()
	obj.SetUID("u1")
	h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 10}})
	current := func(_ *registry.Handler, version string) bool { return version == role.Load().(string) }
	calls := func(m *module, want int32, what string) {
		t.Helper()
		waitFor(t, func() bool { return m.calls.Load() == want && clock.HasWaiters() }, what)
	}

	s.Adjust(context.Background(), key, obj, []*registry.Handler{h}, true)
	calls(stable, 1, "the timer's first run, at once")
	role.Store("canary") // the share changed
	clock.Step(10 * time.Second)
	calls(stable, 2, "the next run on the version it started on")
	if canary.calls.Load() != 0 {
		t.Fatal("a timer moved to the canary in mid-run")
	}
	if n := s.Rebind(key, current); n != 0 {
		t.Fatalf("Rebind = %d, want 0: the old version's timer waited between runs and ended at once", n)
	}
	if n := s.Running(key); n != 0 {
		t.Fatalf("%d workers running after Rebind, want 0", n)
	}
	<-woken
	s.Adjust(context.Background(), key, obj, []*registry.Handler{h}, false)
	calls(canary, 1, "the new timer's first run, on the canary")
	if stable.calls.Load() != 2 {
		t.Errorf("the stable version was called %d times, want 2", stable.calls.Load())
	}
	if n := s.Rebind(key, current); n != 0 {
		t.Errorf("Rebind = %d for a timer on the object's version, want 0", n)
	}
}
