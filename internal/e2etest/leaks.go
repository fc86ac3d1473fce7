package e2etest

import (
	"go.uber.org/goleak"
)

// LeakOptions are the goroutines that goleak.VerifyTestMain ignores in the
// host's and the reactor's tests because they are not the host's: each
// belongs to a library's global state, started once per process whatever
// the host does. Everything else still running when the tests end (every
// host, operator and control plane stopped by then) is a leak.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		// klog's flush daemon: started by klog's init, runs for the
		// process's lifetime (client-go logs through klog).
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		// The workqueue's global metrics updater is per queue and stops
		// with it; client-go's default watch-list feature gates and the
		// rest client's global TLS transport cache hold no goroutines.
	}
}
