package reactor

import (
	"fmt"
	"sync"

	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// shares keeps each module's share of the workers
// (settings.Isolation.Workers): the number of processing cycles that may
// call a module's handlers at once. A cycle takes a module's share at the
// module's first due handler and gives it back when the cycle ends (after
// its write). It never waits for one: a cycle that finds a module at its
// share skips that module's handlers and parks the object with the module,
// and the object is queued again when the module frees a worker. So a
// module whose handlers loop or sleep until their timeout holds at most
// its share of the workers, and the others' objects never queue behind
// its own.
type shares struct {
	// limit is a module's share (0: none); wake queues a parked object.
	limit func(module string) int
	wake  func(objectKey)

	mu      sync.Mutex
	modules map[string]*share
	// woken are the objects queued by a module's free worker and not yet
	// processed, with that module (see settle).
	woken map[objectKey]string
}

// share is the state of one module's share.
type share struct {
	busy     int // cycles holding the share
	pending  int // parked objects queued again, not yet processed
	parked   []objectKey
	isParked map[objectKey]bool
	deferred uint64 // cycles that found the module at its share
}

func newShares(limit func(string) int, wake func(objectKey)) *shares {
	return &shares{limit: limit, wake: wake, modules: map[string]*share{}, woken: map[objectKey]string{}}
}

func (s *shares) get(module string) *share {
	sh := s.modules[module]
	if sh == nil {
		sh = &share{isParked: map[objectKey]bool{}}
		s.modules[module] = sh
	}
	return sh
}

// acquire takes a worker of module's share for key's cycle, or parks key
// with the module and reports false when the module is at its share. A
// nil shares (an operator built by hand in a unit test) bounds nothing.
func (s *shares) acquire(module string, key objectKey) bool {
	if s == nil {
		return true
	}
	limit := s.limit(module)
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.get(module)
	if limit <= 0 || sh.busy < limit {
		sh.busy++
		metrics.ModuleWorkers(module, sh.busy)
		return true
	}
	sh.deferred++
	if !sh.isParked[key] {
		sh.isParked[key] = true
		sh.parked = append(sh.parked, key)
	}
	metrics.ModuleDeferred(module, len(sh.parked))
	return false
}

// release gives back a worker of module's share and queues as many parked
// objects as the share has free workers.
func (s *shares) release(module string) {
	if s == nil {
		return
	}
	limit := s.limit(module)
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.get(module)
	sh.busy--
	metrics.ModuleWorkers(module, sh.busy)
	s.refill(module, sh, limit)
}

// settle is called after every processing of key: if a module's free
// worker queued it, that wake is spent (whether or not the cycle called
// the module), and the module may queue another parked object.
func (s *shares) settle(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	module, ok := s.woken[key]
	if !ok {
		return
	}
	delete(s.woken, key)
	sh := s.get(module)
	sh.pending--
	s.refill(module, sh, s.limit(module))
}

// refill queues parked objects of module while its busy and pending
// cycles leave workers of its share free; s.mu is held.
func (s *shares) refill(module string, sh *share, limit int) {
	for len(sh.parked) > 0 && (limit <= 0 || sh.busy+sh.pending < limit) {
		key := sh.parked[0]
		sh.parked = sh.parked[1:]
		delete(sh.isParked, key)
		if _, already := s.woken[key]; !already {
			s.woken[key] = module
			sh.pending++
		}
		s.wake(key)
	}
	metrics.ModuleWaiting(module, len(sh.parked))
}

// ShareStats are a module's use of its share of the workers.
type ShareStats struct {
	// Busy is the number of cycles calling the module now; Limit its share
	// (0: none).
	Busy, Limit int
	// Waiting is the number of objects parked until the module frees a
	// worker; Deferred counts the cycles that found the module at its share.
	Waiting  int
	Deferred uint64
}

// stats returns module's figures.
func (s *shares) stats(module string) ShareStats {
	limit := s.limit(module)
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.modules[module]
	if sh == nil {
		return ShareStats{Limit: limit}
	}
	return ShareStats{Busy: sh.busy, Limit: limit, Waiting: len(sh.parked), Deferred: sh.deferred}
}

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
