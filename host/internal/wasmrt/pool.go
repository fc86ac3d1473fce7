package wasmrt

import (
	"context"
	"sync"
	"sync/atomic"
)

// pool holds the instances of one module: at most cap(slots) alive, each
// either idle (in idle) or held by exactly one caller.
type pool struct {
	slots  chan struct{}  // one token per live instance
	idle   chan *instance // instances ready for a call
	create func(ctx context.Context) (*instance, error)
	done   chan struct{} // closed by close
	once   sync.Once

	// recycleCalls and recycleBytes: an instance is replaced after that
	// many calls, or after a call that left its memory above that many
	// bytes (0: never).
	recycleCalls int
	recycleBytes int64

	created   atomic.Uint64
	discarded atomic.Uint64
	recycled  atomic.Uint64
	memory    atomic.Int64 // linear memory of the live instances, as last counted
}

// count brings the pool's memory figure in line with inst's memory now.
func (p *pool) count(inst *instance) {
	size := inst.memorySize()
	p.memory.Add(size - inst.memBytes)
	inst.memBytes = size
}

func newPool(size int, create func(ctx context.Context) (*instance, error)) *pool {
	return &pool{
		slots:  make(chan struct{}, size),
		idle:   make(chan *instance, size),
		create: create,
		done:   make(chan struct{}),
	}
}

// get returns an idle instance, or a new one if fewer than the pool's size
// are alive, or waits for one of these until ctx ends.
func (p *pool) get(ctx context.Context) (*instance, error) {
	select {
	case inst := <-p.idle:
		return inst, nil
	default:
	}
	select {
	case inst := <-p.idle:
		return inst, nil
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, ErrClosed
	}
	inst, err := p.create(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.created.Add(1)
	p.count(inst)
	return inst, nil
}

// add puts a fresh instance (created outside get) into the pool; it reports
// false, and the caller must close it, when the pool is full or closed.
func (p *pool) add(inst *instance) bool {
	select {
	case p.slots <- struct{}{}:
	default:
		return false
	}
	p.created.Add(1)
	p.count(inst)
	p.keep(inst)
	return true
}

// put returns an instance after a successful call, or replaces it when
// it is due for recycling (its slot is then free for a fresh one).
func (p *pool) put(inst *instance) {
	p.count(inst)
	inst.calls++
	if (p.recycleCalls > 0 && inst.calls >= p.recycleCalls) || (p.recycleBytes > 0 && inst.memBytes > p.recycleBytes) {
		p.recycled.Add(1)
		p.discard(inst)
		return
	}
	p.keep(inst)
}

// keep makes inst idle, or closes it when the pool is closed.
func (p *pool) keep(inst *instance) {
	select {
	case <-p.done:
		p.discard(inst)
		return
	default:
	}
	p.idle <- inst // never blocks: at most cap(slots) instances exist
	// close may have drained idle just before the send: drain again.
	select {
	case <-p.done:
		p.drain()
	default:
	}
}

// discard closes an instance that must not be used again and frees its slot.
func (p *pool) discard(inst *instance) {
	inst.close()
	p.memory.Add(-inst.memBytes)
	inst.memBytes = 0
	p.discarded.Add(1)
	<-p.slots
}

// close stops the pool: idle instances are closed now, busy ones when put.
func (p *pool) close() {
	p.once.Do(func() { close(p.done) })
	p.drain()
}

func (p *pool) drain() {
	for {
		select {
		case inst := <-p.idle:
			p.discard(inst)
		default:
			return
		}
	}
}

// Stats describe a module's instance pool.
type Stats struct {
	Live      int    // instances alive, idle or busy
	Idle      int    // instances waiting for a call
	Created   uint64 // instances created since load
	Discarded uint64 // instances closed (after a failure, at close, or recycled)
	// Recycled counts the instances replaced for their calls or memory
	// (Options.RecycleCalls, RecycleBytes).
	Recycled uint64
	// MemoryBytes is the linear memory of the live instances, as counted
	// when each was created or last returned to the pool.
	MemoryBytes int64
	// BudgetBytes is the linear memory of all the module's instances now,
	// pooled and dedicated (daemons), which its memory budget bounds;
	// BudgetHits counts the growths and instances the budget refused.
	BudgetBytes int64
	BudgetHits  uint64
}

func (p *pool) stats() Stats {
	return Stats{
		Live:        len(p.slots),
		Idle:        len(p.idle),
		Created:     p.created.Load(),
		Discarded:   p.discarded.Load(),
		Recycled:    p.recycled.Load(),
		MemoryBytes: p.memory.Load(),
	}
}
