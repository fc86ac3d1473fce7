package operator

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// limitsOf are the bounds a Module object sets for its module
// (spec.limits), each one it leaves out taken from the settings.
func limitsOf(obj *unstructured.Unstructured, iso settings.Isolation) (settings.ModuleLimits, error) {
	l := settings.ModuleLimits{Workers: iso.Workers, QPS: iso.QPS, Burst: iso.Burst, MemoryBytes: iso.MemoryBytes}
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "limits")
	for key, v := range spec {
		n, ok := number(v)
		if !ok || n < 0 {
			return l, fmt.Errorf("spec.limits.%s: must be a number, 0 or more, got %v", key, v)
		}
		switch key {
		case "workers":
			l.Workers = int(n)
		case "qps":
			l.QPS = float32(n)
		case "burst":
			l.Burst = int(n)
		case "memoryBytes":
			l.MemoryBytes = int64(n)
		default:
			return l, fmt.Errorf("spec.limits.%s: unknown limit (workers, qps, burst, memoryBytes)", key)
		}
	}
	if l.QPS > 0 && l.Burst < 1 {
		return l, fmt.Errorf("spec.limits.burst: must be at least 1 when qps is above 0, got %d", l.Burst)
	}
	return l, nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// isolationStatus is what status.isolation says of a module's bounds.
func isolationStatus(b reactor.Bounds) map[string]any {
	return map[string]any{
		"workers": b.Busy, "workerShare": b.Limit, "deferredCycles": b.Deferred, "waitingObjects": b.Waiting,
		"requestsThrottled": b.Throttled, "timeouts": b.Timeouts, "outOfMemory": b.OutOfMemory,
		"memoryBytes": b.MemoryBytes, "memoryBudget": b.MemoryBudget, "memoryBudgetHits": b.MemoryBudgetHits,
	}
}

// reportBounds writes, every interval until ctx ends, each loaded Module
// object's bounds into its status.isolation when its hits or its bounds
// changed since the last write (settings.Isolation.StatusInterval); the
// figures of the moment (workers busy, objects waiting, memory) go with
// them, but do not cause a write by themselves: a busy module would
// otherwise be written every interval.
func (m *moduleResources) reportBounds(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	written := map[string]map[string]any{}
	changed := func(prev, now map[string]any) bool {
		for _, key := range []string{"workerShare", "deferredCycles", "requestsThrottled", "timeouts", "outOfMemory", "memoryBudget", "memoryBudgetHits"} {
			if prev == nil || !reflect.DeepEqual(prev[key], now[key]) {
				return true
			}
		}
		return false
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for name, module := range m.loadedModules() {
			st := isolationStatus(m.set.op.Bounds(module))
			if !changed(written[name], st) {
				continue
			}
			m.status(ctx, name, map[string]any{"isolation": st})
			written[name] = st
		}
	}
}

// loadedModules are the loaded Module objects' module names (from their
// manifests), by object name.
func (m *moduleResources) loadedModules() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.loaded))
	for name, l := range m.loaded {
		if l.stable.mod != nil {
			out[name] = l.stable.mod.Manifest().Module.Name
		}
	}
	return out
}
