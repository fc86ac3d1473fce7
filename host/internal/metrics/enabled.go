package metrics

import "sync/atomic"

// enabled says whether reports are recorded; on until [SetEnabled] turns
// it off.
var enabled atomic.Bool

func init() { enabled.Store(true) }

// SetEnabled turns reporting on or off for the whole process. Off, every
// report function returns at once (one atomic load), client-go's REST
// client hooks do nothing, and queues named through [QueueName] keep no
// metrics at all. The host turns it off when it serves no metrics
// (--metrics-bind-address 0, controller-runtime's "off"), before it builds
// its operator; what was recorded before stays in the registry.
func SetEnabled(on bool) { enabled.Store(on) }

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
