package reactor

import (
	"io"
	"log/slog"
	"strconv"
	"testing"

	"k8s.io/client-go/util/workqueue"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// pausingOperator is an operator with a gate, a queue and no watches:
// enough for enter and resume.
func pausingOperator(t *testing.T) (*Operator, *gate.Gate) {
	t.Helper()
	set := settings.Default()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	exec := execution.New(execution.Options{Modules: func(string) execution.Module { return nil },
		Settings: set, Logger: log})
	g := gate.New()
	o := &Operator{opts: Options{Settings: set, Gate: g}, log: log, served: map[string]*served{},
		parked: map[objectKey]struct{}{}, queue: workqueue.NewTypedRateLimitingQueue[objectKey](newErrorDelays(set.Queueing.ErrorDelays))}
	o.spawner = spawning.New(spawning.Options{Exec: exec, Logger: log, Gate: g})
	t.Cleanup(o.queue.ShutDown)
	return o, g
}

// TestRefusedKeysAreResumed: a cycle refused by the closed gate while the
// gate opens and resume takes the parked set is queued all the same, by
// that resume or (if it parked first) through the parked set: after the
// gate is open and resume has run, no refused key is left behind. Each
// round races one refusal against one opening; before enter re-checked
// the gate under parkMu, 2 of 3 runs lost a key.
func TestRefusedKeysAreResumed(t *testing.T) {
	o, g := pausingOperator(t)
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	refusals := 0
	for i := range rounds {
		key := objectKey{resource: "r", namespace: "ns", name: strconv.Itoa(i)}
		g.Block("test", "paused by the test")
		ready, entered := make(chan struct{}), make(chan bool)
		go func() {
			close(ready)
			entered <- o.enter(key)
		}()
		<-ready
		g.Unblock("test")
		o.resume()
		if <-entered {
			g.Leave()
			continue
		}
		refusals++
		if n := o.queue.Len(); n != 1 {
			o.parkMu.Lock()
			_, parked := o.parked[key]
			o.parkMu.Unlock()
			t.Fatalf("round %d: the refused key is not queued after the gate opened and resume ran "+
				"(queue length %d, still parked: %t)", i, n, parked)
		}
		got, _ := o.queue.Get()
		o.queue.Done(got)
		if got != key {
			t.Fatalf("round %d: queued %v, want %v", i, got, key)
		}
	}
	t.Logf("%d of %d rounds refused the cycle while the gate opened", refusals, rounds)
}
