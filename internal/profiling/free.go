package profiling

import (
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// FreeOnSignal returns memory to the OS (a GC and debug.FreeOSMemory) on
// every SIGUSR2, so that a benchmark can measure the RSS of what its
// operator holds live rather than of garbage not yet collected or
// returned. Both benchmark operators call it at start; it returns the
// function that stops it.
func FreeOnSignal() (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sig:
				debug.FreeOSMemory()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(sig); close(done) }
}
