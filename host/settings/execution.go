package settings

import "time"

// Execution tunes handler calls and their retries.
type Execution struct {
	// DefaultBackoff is the retry delay after an arbitrary error when the
	// handler sets no backoff, and the delay of a temporary error that names
	// none (Kopf's TemporaryError default).
	DefaultBackoff time.Duration `json:"defaultBackoff"`
	// Workers is the number of objects processed at once (the bounded
	// worker pool).
	Workers int `json:"workers"`
	// MaxDaemons caps the daemons running at once per module; each holds a
	// wasm instance of its own. A daemon past the cap waits for a slot, and
	// a warning says so.
	MaxDaemons int `json:"maxDaemons"`
	// CancellationPolling is how often the host checks, and says in its
	// log, that a daemon asked to stop still runs, when the daemon sets no
	// cancellation timeout (which would close it) and no polling of its
	// own: Kopf's settings.background.cancellation_polling. The object
	// keeps its finalizer meanwhile.
	CancellationPolling time.Duration `json:"cancellationPolling"`
	// ProbeCache is how long the liveness endpoint reuses the results of
	// the probe handlers before calling them again; Kopf's fixed 10 s. 0:
	// every request calls them.
	ProbeCache time.Duration `json:"probeCache"`
	// IndexInline is the largest encoded index (in bytes) that every
	// request of its module's handlers carries whole; a larger index is
	// carried as null and the guest reads it through index look-ups (by
	// key, or whole once per call when a handler asks for all of it), so
	// that requests do not grow with the index. 0: never carried whole.
	IndexInline int `json:"indexInline"`
	// TimerStopWait is how long a deletion's processing cycle waits for the
	// object's timers that are between a run and their next wait (storing
	// an outcome, asking their initial delay) to exit once asked to stop,
	// so that it can release the finalizer itself instead of leaving that
	// to one more cycle (and one more write). A timer waiting between two
	// runs ends at once, without this wait; a timer in a call is not
	// waited for. 0: no wait.
	TimerStopWait time.Duration `json:"timerStopWait"`
}

// defaultExecution is Kopf's backoff and cancellation polling, and a pool
// of 16 workers.
func defaultExecution() Execution {
	return Execution{DefaultBackoff: 60 * time.Second, Workers: 16, MaxDaemons: 100, CancellationPolling: 60 * time.Second,
		ProbeCache: 10 * time.Second, IndexInline: 4096, TimerStopWait: time.Second}
}

// validate reports a pool or delays no operator can run with.
func (e Execution) validate(v *validator) {
	v.notNegative("execution.defaultBackoff", e.DefaultBackoff)
	v.atLeast("execution.workers", e.Workers, 1)
	v.atLeast("execution.maxDaemons", e.MaxDaemons, 1)
	v.positive("execution.cancellationPolling", e.CancellationPolling)
	v.notNegative("execution.probeCache", e.ProbeCache)
	v.atLeast("execution.indexInline", e.IndexInline, 0)
	v.notNegative("execution.timerStopWait", e.TimerStopWait)
}
