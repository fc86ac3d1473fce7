// Package profiling lets a benchmark start a child process's CPU profile
// from the outside: the benchmark's operators call [OnSignal] at start, and
// the benchmark sends SIGUSR1 when its measured phases begin, so that
// start-up is left out of the profile.
package profiling

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// OnSignal writes a CPU profile to path from the first SIGUSR1 on until the
// returned function is called.
func OnSignal(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	started := make(chan bool, 1)
	go func() {
		<-sig
		started <- pprof.StartCPUProfile(f) == nil
	}()
	return func() {
		signal.Stop(sig)
		select {
		case sig <- syscall.SIGUSR1: // not started yet: nothing to stop
		default:
		}
		if <-started {
			pprof.StopCPUProfile()
		}
		_ = f.Close()
	}, nil
}
