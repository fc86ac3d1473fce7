package reactor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

// reportCycle reports one processing cycle of an object of resource to
// the metrics, under controller-runtime's reconcile names: a failure
// (the object is throttled) is an error, a cycle that schedules another
// a requeue. Cycles cut short by the host's stop, or of objects that went
// away, are not reported.
func reportCycle(ctx context.Context, resource string, out outcome, err error, took time.Duration) {
	switch {
	case errors.Is(err, execution.ErrGone), err != nil && ctx.Err() != nil:
		return
	case err != nil:
		metrics.Reconcile(resource, metrics.ResultError, took)
	case out.delay > 0:
		metrics.Reconcile(resource, metrics.ResultRequeueAfter, took)
	case out.again:
		metrics.Reconcile(resource, metrics.ResultRequeue, took)
	default:
		metrics.Reconcile(resource, metrics.ResultSuccess, took)
	}
}

// cycles numbers the processing cycles of this process; cyclePrefix tells
// the processes apart (a restart, another replica).
var (
	cycles      atomic.Uint64
	cyclePrefix = func() string {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}()
)

// nextCycleID is the id of a new processing cycle, for its log lines
// ("cycle"): the process's prefix and a counter, e.g. "3fa2c1-42".
func nextCycleID() string {
	return cyclePrefix + "-" + strconv.FormatUint(cycles.Add(1), 10)
}
