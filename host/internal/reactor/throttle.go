package reactor

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// errorDelays is a workqueue rate limiter that waits Kopf's error delays
// (settings.Queueing.ErrorDelays) between the attempts of an object whose
// processing failed for a reason of the framework's own (API errors,
// malformed stored state): the n-th consecutive failure waits delays[n],
// the last delay repeating. client-go's limiters are exponential or
// two-speed; Kopf's sequence is neither, so this implements the same
// interface, and the queue's AddRateLimited, Forget and NumRequeues work
// with it as with client-go's own.
type errorDelays struct {
	delays []time.Duration

	mu       sync.Mutex
	failures map[objectKey]int
}

var _ workqueue.TypedRateLimiter[objectKey] = (*errorDelays)(nil)

func newErrorDelays(delays []time.Duration) *errorDelays {
	if len(delays) == 0 {
		delays = []time.Duration{time.Second}
	}
	return &errorDelays{delays: delays, failures: map[objectKey]int{}}
}

// When counts a failure of key and returns how long to wait before the
// next attempt.
func (l *errorDelays) When(key objectKey) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.failures[key]
	l.failures[key] = n + 1
	return l.delays[min(n, len(l.delays)-1)]
}

// Forget resets key's failures after a successful cycle.
func (l *errorDelays) Forget(key objectKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
}

// NumRequeues is the number of consecutive failures of key.
func (l *errorDelays) NumRequeues(key objectKey) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[key]
}
