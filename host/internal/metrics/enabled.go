package metrics

import (
	"sync"
	"sync/atomic"
)

// enabled says whether reports are recorded: what [SetEnabled] says
// while no host holds the metrics, and then whether one of the hosts that
// hold them serves them ([Hold]).
var enabled atomic.Bool

func init() { enabled.Store(true) }

var (
	holdMu sync.Mutex
	// base is SetEnabled's value; hosts and serving count the holds.
	base           = true
	hosts, serving int
)

// SetEnabled turns reporting on or off while no host holds the metrics
// (a benchmark, a test; the default is on). Off, every report function
// returns at once (one atomic load), client-go's REST client hooks do
// nothing, and queues named through [QueueName] keep no metrics at all;
// what was recorded before stays in the registry.
func SetEnabled(on bool) {
	holdMu.Lock()
	defer holdMu.Unlock()
	base = on
	update()
}

// Hold is called by a host when it starts, with whether it serves the
// metrics, and the returned release when it stops. While hosts hold them,
// reports are recorded when at least one of them serves the metrics (a
// host that serves none, alone in its process, records none, as
// controller-runtime's "0"): two hosts of one process never turn each
// other's metrics off.
func Hold(serves bool) (release func()) {
	holdMu.Lock()
	defer holdMu.Unlock()
	hosts++
	if serves {
		serving++
	}
	update()
	var once sync.Once
	return func() {
		once.Do(func() {
			holdMu.Lock()
			defer holdMu.Unlock()
			hosts--
			if serves {
				serving--
			}
			update()
		})
	}
}

// update sets enabled from the holds; holdMu is held.
func update() { enabled.Store(serving > 0 || (hosts == 0 && base)) }

// Enabled says whether reports are recorded.
func Enabled() bool { return enabled.Load() }

// QueueName is the name to give a client-go workqueue: name while metrics
// are on, and "" while they are off, for which client-go keeps no queue
// metrics (no clock reads per item, no goroutine updating the
// unfinished-work gauges).
func QueueName(name string) string {
	if !enabled.Load() {
		return ""
	}
	return name
}
