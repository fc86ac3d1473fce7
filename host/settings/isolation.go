package settings

import "time"

// Isolation bounds what one module may take from the others in a host that
// serves several: a share of the workers, a rate of Kubernetes requests and
// a memory budget. A Module resource may set other values for its module
// (spec.limits); docs/isolation.md says what each bound promises.
type Isolation struct {
	// Workers is the most workers (execution.workers) that may run
	// processing cycles calling one module's handlers at once: a cycle
	// that reaches a handler of a module at its share skips that module's
	// handlers (the other modules' handlers run and are written), and the
	// object is processed again as soon as the module frees a worker. So a
	// module whose handlers loop, sleep or time out holds at most this many
	// workers, and the others keep execution.workers minus it. An object
	// of a resource several modules handle takes a share of each module
	// whose handlers it calls. A host serving one module gives it every
	// worker. 0: no share (a module may hold every worker); more than
	// execution.workers counts as execution.workers.
	Workers int `json:"workers"`
	// QPS and Burst rate-limit, per module, the Kubernetes requests its
	// handlers make and the Events they post (client-go's token bucket);
	// a request past the bound waits, within the call's timeout.
	// QPS 0 or less: no limit. The host's own writes (results, progress,
	// finalizers) are bounded by the module's share of the workers instead.
	QPS float32 `json:"qps"`
	// Burst is the token bucket's size when QPS is above zero.
	Burst int `json:"burst"`
	// MemoryBytes bounds the linear memory of all of one module's wasm
	// instances together (the pooled ones and the daemons' own): a guest
	// whose memory would grow past it gets an out-of-memory failure, and
	// no new instance starts while the module is at it. 0: no budget (each
	// instance is still bounded by wasm.maxMemoryPages).
	MemoryBytes int64 `json:"memoryBytes"`
	// StatusInterval is how often a module served from a Module resource
	// gets how it stands against its bounds written to status.isolation,
	// when its hits (deferred cycles, throttled requests, timeouts, memory
	// refusals) or its bounds changed. 0: never.
	StatusInterval time.Duration `json:"statusInterval"`
}

// defaultIsolation gives a module at most a quarter of the default
// workers (so three misbehaving at once leave the others 4), 50 requests
// a second (100 at once) and 1 GiB of wasm memory.
func defaultIsolation() Isolation {
	return Isolation{Workers: 4, QPS: 50, Burst: 100, MemoryBytes: 1 << 30, StatusInterval: 10 * time.Second}
}

// validate reports bounds no module can run within.
func (i Isolation) validate(v *validator) {
	v.atLeast("isolation.workers", i.Workers, 0)
	if i.QPS > 0 && i.Burst < 1 {
		v.fail("isolation.burst", "must be at least 1 when isolation.qps is above 0, got %d", i.Burst)
	} else {
		v.atLeast("isolation.burst", i.Burst, 0)
	}
	if i.MemoryBytes < 0 {
		v.fail("isolation.memoryBytes", "must be 0 or more, got %d", i.MemoryBytes)
	}
	v.notNegative("isolation.statusInterval", i.StatusInterval)
}

// ModuleLimits are one module's bounds: the settings' values, with those a
// Module resource sets (spec.limits) in their place.
type ModuleLimits struct {
	Workers     int
	QPS         float32
	Burst       int
	MemoryBytes int64
}
