package wasmrt

import (
	"context"
	"sync"

	"github.com/tetratelabs/wazero/api"
)

// interruptExport is the name of the global that the runtime adds to every
// module it compiles (see package instrument): each loop of the guest checks
// it and traps when it is raised.
const interruptExport = "kopf_wasm_interrupt"

// interrupter ends a call of an instance when the call's context ends. For
// an instrumented module it raises the instance's interrupt flag, which the
// guest's next loop header sees; the guest traps (unreachable) and the
// instance is discarded. Without the flag (a module that could not be
// instrumented, compiled with wazero's own context checks instead) wazero
// closes the instance itself and the interrupter only reports whether the
// context ended.
type interrupter struct {
	flag api.MutableGlobal // nil without instrumentation

	mu           sync.Mutex
	armed, fired bool
}

// watch arms the interrupter for a call under ctx; the returned function
// must be called when the call has returned: it disarms the interrupter,
// lowers the flag and reports whether the call was interrupted.
func (it *interrupter) watch(ctx context.Context) (done func() (interrupted bool)) {
	if it.flag == nil {
		return func() bool { return ctx.Err() != nil }
	}
	it.mu.Lock()
	it.armed, it.fired = true, false
	it.mu.Unlock()
	stop := context.AfterFunc(ctx, it.fire)
	return func() bool {
		stop()
		it.mu.Lock()
		defer it.mu.Unlock()
		it.armed = false
		if it.fired {
			it.flag.Set(0)
		}
		return it.fired
	}
}

// fire raises the flag if a call is in progress. It runs on its own
// goroutine while the guest runs on the caller's: the guest reads the flag
// from the memory that Set writes.
func (it *interrupter) fire() {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.armed {
		it.flag.Set(1)
		it.fired = true
	}
}
