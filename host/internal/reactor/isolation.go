package reactor

import (
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// The bounds of each module in a host serving several (settings.Isolation,
// docs/isolation.md): the cycle takes each module's share of the workers
// (shares.go) before it calls the module's handlers; the executor holds
// the request rate limits, wasmrt the memory budgets.

// share reports whether the cycle may call module's handlers: it holds
// the module's share already, or takes it now; a module at its share is
// skipped for the rest of the cycle.
func (c *cyc) share(module string) bool {
	switch {
	case c.held[module]:
		return true
	case c.skipped[module]:
		return false
	}
	if !c.o.shares.acquire(module, c.key) {
		if c.skipped == nil {
			c.skipped = map[string]bool{}
		}
		c.skipped[module] = true
		c.debug(fmt.Sprintf("Module %q holds its share of the workers; its handlers run when it frees one.", module))
		return false
	}
	if c.held == nil {
		c.held = map[string]bool{}
	}
	c.held[module] = true
	return true
}

// releaseShares gives back the shares the cycle holds.
func (c *cyc) releaseShares() {
	for module := range c.held {
		c.o.shares.release(module)
	}
	c.held = nil
}

// workerShare is module's share of the workers: its Module resource's
// limit, else settings.Isolation.Workers; 0 (none) when that is all of
// them, or when the host serves this module alone (there is no other to
// keep workers for, and a single operator keeps the whole pool).
func (o *Operator) workerShare(module string) int {
	if set := o.current.Load(); set == nil || len(*set) < 2 {
		return 0
	}
	n := o.limits(module).Workers
	if n >= o.opts.Settings.Execution.Workers {
		return 0
	}
	return n
}

// limits are module's bounds: the ones its Module resource set, else the
// settings'.
func (o *Operator) limits(module string) settings.ModuleLimits {
	if m, ok := o.module(module).(interface {
		Limits() (settings.ModuleLimits, bool)
	}); ok {
		if l, set := m.Limits(); set {
			return l
		}
	}
	iso := o.opts.Settings.Isolation
	return settings.ModuleLimits{Workers: iso.Workers, QPS: iso.QPS, Burst: iso.Burst, MemoryBytes: iso.MemoryBytes}
}

// Shares returns module's use of its share of the workers.
func (o *Operator) Shares(module string) ShareStats { return o.shares.stats(module) }

// Bounds are how a module stands against its bounds (settings.Isolation):
// its share of the workers, its request rate limit, its memory budget, and
// its calls' timeouts.
type Bounds struct {
	ShareStats
	execution.BoundHits
	// MemoryBytes is the linear memory of all its instances now;
	// MemoryBudget its budget (0: none); MemoryBudgetHits counts the
	// growths and instances the budget refused.
	MemoryBytes, MemoryBudget int64
	MemoryBudgetHits          uint64
}

// Bounds returns how module stands against its bounds.
func (o *Operator) Bounds(module string) Bounds {
	b := Bounds{ShareStats: o.shares.stats(module), BoundHits: o.exec.Hits(module), MemoryBudget: o.limits(module).MemoryBytes}
	if m, ok := o.module(module).(interface{ Stats() wasmrt.Stats }); ok {
		st := m.Stats()
		b.MemoryBytes, b.MemoryBudgetHits = st.BudgetBytes, st.BudgetHits
	}
	return b
}
