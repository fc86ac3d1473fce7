package settings

import "time"

// Queueing tunes the per-object queues.
type Queueing struct {
	// ErrorDelays throttle an object after a framework or API error (not a
	// handler error): the n-th consecutive error waits ErrorDelays[n], and
	// the last value repeats. Kopf's Fibonacci series.
	ErrorDelays []time.Duration `json:"errorDelays"`
}

// defaultQueueing is Kopf's Fibonacci series of error delays.
func defaultQueueing() Queueing {
	return Queueing{ErrorDelays: seconds(1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610)}
}

// validate reports an empty or negative series.
func (q Queueing) validate(v *validator) {
	if len(q.ErrorDelays) == 0 {
		v.fail("queueing.errorDelays", "must list at least one delay")
	}
	v.notNegativeList("queueing.errorDelays", q.ErrorDelays)
}
