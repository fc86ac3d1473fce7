package wasmrt

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// budget bounds the linear memory of all the instances of one module
// together, pooled and dedicated (settings.Isolation.MemoryBytes): a
// memory that would grow past it fails to grow, which the guest sees as
// running out of memory, and no instance starts while the module is at it.
type budget struct {
	limit atomic.Int64 // bytes; 0: none
	used  atomic.Int64
	hits  atomic.Uint64
}

// take counts n more bytes, or reports false (a hit) when they would pass
// the limit; force counts them whatever the limit (a memory's initial
// size, which wazero cannot be refused).
func (b *budget) take(n int64, force bool) bool {
	for {
		used, limit := b.used.Load(), b.limit.Load()
		if !force && limit > 0 && used+n > limit {
			b.hits.Add(1)
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// full reports, and counts as a hit, that the module is at its budget.
func (b *budget) full() bool {
	if limit := b.limit.Load(); limit > 0 && b.used.Load() >= limit {
		b.hits.Add(1)
		return true
	}
	return false
}

type budgetKey struct{}

// withBudget makes the memories of instances created with ctx count
// against b.
func withBudget(ctx context.Context, b *budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// budgeted wraps an allocator's memory so that its size counts against
// the module's budget.
func budgeted(ctx context.Context, mem experimental.LinearMemory) experimental.LinearMemory {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil {
		return mem
	}
	return &budgetMemory{LinearMemory: mem, budget: b}
}

// budgetMemory is a linear memory whose growth the budget may refuse.
type budgetMemory struct {
	experimental.LinearMemory
	budget *budget
	once   sync.Once
	size   int64
}

// Reallocate grows the memory if the budget allows it (its first size,
// wazero's minimum, always).
func (m *budgetMemory) Reallocate(size uint64) []byte {
	first := false
	m.once.Do(func() { first = true })
	grow := int64(size) - m.size
	if grow > 0 && !m.budget.take(grow, first) {
		return nil
	}
	buf := m.LinearMemory.Reallocate(size)
	if buf == nil {
		m.budget.used.Add(-max(grow, 0))
		return nil
	}
	if grow > 0 {
		m.size = int64(size)
	}
	return buf
}

// Free returns the memory's bytes to the budget.
func (m *budgetMemory) Free() {
	m.budget.used.Add(-m.size)
	m.size = 0
	m.LinearMemory.Free()
}

// SetLimits sets the module's own bounds (a Module resource's
// spec.limits), which the host uses instead of settings.Isolation's, and
// applies the memory budget.
func (m *Module) SetLimits(l settings.ModuleLimits) {
	m.limitsMu.Lock()
	m.limits = &l
	m.limitsMu.Unlock()
	m.SetMemoryBudget(l.MemoryBytes)
}

// Limits returns the module's own bounds, and whether it has any
// (SetLimits).
func (m *Module) Limits() (settings.ModuleLimits, bool) {
	m.limitsMu.Lock()
	defer m.limitsMu.Unlock()
	if m.limits == nil {
		return settings.ModuleLimits{}, false
	}
	return *m.limits, true
}

// SetMemoryBudget bounds the linear memory of all the module's instances
// together to bytes (0: no bound). Instances already past it keep their
// memory but cannot grow, and no new instance starts until they are gone.
func (m *Module) SetMemoryBudget(bytes int64) { m.budget.limit.Store(max(bytes, 0)) }
