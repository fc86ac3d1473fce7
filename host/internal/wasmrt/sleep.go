package wasmrt

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// errSleepInterrupted ends a call whose guest sleeps (WASI poll_oneoff with
// a clock, or the host's sleep_until_stopped) when the call's context
// ends. The sleep panics with it, wazero turns the panic into the call's
// error, and the instance is discarded as after any interrupted call.
var errSleepInterrupted = errors.New("the guest's sleep was interrupted: its call ended")

// sleeper serves the WASI sleeps of one instance (wazero's
// ModuleConfig.WithNanosleep): a sleep lasts its time unless the context of
// the call in progress ends first; then the call is ended at once, as the
// interrupt flag ends a looping guest. wazero's own nanosleep
// (WithSysNanosleep) sleeps without looking at any context, so a guest in
// time.Sleep (Go), std::thread::sleep (Rust) or time.sleep (Python) would
// outlive its call timeout, its daemon's cancellation and the host's
// shutdown.
type sleeper struct {
	call atomic.Pointer[context.Context] // the call in progress, nil between calls
}

// watch makes ctx the context that ends sleeps until the returned function
// is called. An instance serves one call at a time, so one context at a
// time is enough.
func (s *sleeper) watch(ctx context.Context) (done func()) {
	s.call.Store(&ctx)
	return func() { s.call.Store(nil) }
}

// sleep pauses for ns nanoseconds, or panics with errSleepInterrupted when
// the call's context ends first. It runs on the guest's goroutine, inside
// the host function poll_oneoff, where wazero recovers the panic.
func (s *sleeper) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	var done <-chan struct{}
	if ctx := s.call.Load(); ctx != nil {
		done = (*ctx).Done()
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
		panic(errSleepInterrupted)
	}
}
