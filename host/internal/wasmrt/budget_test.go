package wasmrt

import (
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestMemoryBudget: a module's memory budget bounds all its instances
// together, below each one's own limit: a guest that allocates without end
// runs out of memory at the budget, the refusal is counted, the memory is
// given back when its instance is discarded, a module at its budget starts
// no instance (a daemon's), and another module of the runtime is not
// touched by any of it.
func TestMemoryBudget(t *testing.T) {
	r := newRuntime(t, Options{MemoryLimitPages: 1024, Logger: discardLogger()}) // 64 MiB an instance
	m := load(t, r, "misbehave")
	good := load(t, r, "good")
	const limit = 24 << 20
	m.SetLimits(settings.ModuleLimits{MemoryBytes: limit})
	if l, own := m.Limits(); !own || l.MemoryBytes != limit {
		t.Fatalf("Limits() = %+v, %v", l, own)
	}

	_, err := m.Handle(t.Context(), request("oom", 100), nil)
	var cerr *CallError
	if !errors.As(err, &cerr) || cerr.Kind != KindOutOfMemory {
		t.Fatalf("oom under a budget: %v, want %s", err, KindOutOfMemory)
	}
	s := m.Stats()
	if s.BudgetHits == 0 || s.BudgetBytes != s.MemoryBytes {
		t.Errorf("stats %+v: want a hit counted, and the discarded instance's memory given back", s)
	}
	if ok, err := m.Handle(t.Context(), request("ok", 100), nil); err != nil || ok.Outcome.Status != abi.OutcomeSuccess {
		t.Errorf("the module does not recover after its budget was hit: %+v, %v", ok, err)
	}

	// At its budget, the module starts no instance of its own for a daemon.
	m.SetMemoryBudget(1)
	hits := m.Stats().BudgetHits
	if _, err := m.HandleDedicated(t.Context(), request("ok", 100), nil); !errors.As(err, &cerr) || cerr.Kind != KindOutOfMemory {
		t.Errorf("a daemon's instance past the budget: %v, want %s", err, KindOutOfMemory)
	}
	if m.Stats().BudgetHits == hits {
		t.Error("the refused instance was not counted")
	}
	if _, err := good.Handle(t.Context(), request("decode", 1024), nil); err != nil {
		t.Errorf("another module: %v", err)
	}
}
