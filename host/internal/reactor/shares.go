package reactor

import (
	"sync"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
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
	if s == nil {
		return
	}
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
	if s == nil {
		return ShareStats{}
	}
	limit := s.limit(module)
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.modules[module]
	if sh == nil {
		return ShareStats{Limit: limit}
	}
	return ShareStats{Busy: sh.busy, Limit: limit, Waiting: len(sh.parked), Deferred: sh.deferred}
}
