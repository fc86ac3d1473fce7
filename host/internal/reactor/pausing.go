package reactor

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
)

// This file is the reactor's side of the host-wide gate (package gate):
// what pausing and resuming do to the processing cycles, timers and
// daemons. Admission webhooks are not behind the gate.

// enter lets a processing cycle of key run, or parks the key while the
// host is paused; it reports whether the cycle may run (then call
// o.opts.Gate.Leave after it).
//
// A refused key is parked only after the gate refused it again under
// parkMu: resume takes the parked set under parkMu once the gate is open,
// so a key is either in the set it takes or finds the gate open (or
// closed again, and then the next resume takes it). Parking after an
// unguarded refusal lost the key when resume took the set in between.
func (o *Operator) enter(key objectKey) bool {
	if o.opts.Gate.Enter() {
		return true
	}
	o.parkMu.Lock()
	defer o.parkMu.Unlock()
	if o.opts.Gate.Enter() {
		return true
	}
	o.parked[key] = struct{}{}
	return false
}

// followGate pauses and resumes the operator as the gate closes and opens,
// until ctx ends.
func (o *Operator) followGate(ctx context.Context) {
	g := o.opts.Gate
	open := true
	for {
		changed := g.Changed()
		now := g.Open()
		switch {
		case open && !now:
			o.pause(g)
		case !open && now:
			o.resume()
		}
		open = now
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// pause stops the timers and daemons (reason "pausing"); cycles stop by
// themselves, as the gate refuses them.
func (o *Operator) pause(g *gate.Gate) {
	o.log.Info(fmt.Sprintf("Pausing the handling of changes, timers and daemons: %s", g.Reason()))
	o.spawner.Pause()
}

// resume queues every object in the watch caches (the fresh view Kopf gets
// by re-listing) and every key parked meanwhile; their cycles start the
// timers and daemons again.
func (o *Operator) resume() {
	o.spawner.Resume()
	o.parkMu.Lock()
	keys := o.parked
	o.parked = map[objectKey]struct{}{}
	o.parkMu.Unlock()
	o.mu.RLock()
	for resource, s := range o.served {
		if s.watch == nil {
			continue
		}
		eachCached(s.watch, func(_ string, obj *unstructured.Unstructured) {
			keys[objectKey{resource: resource, namespace: obj.GetNamespace(), name: obj.GetName()}] = struct{}{}
		})
	}
	o.mu.RUnlock()
	for key := range keys {
		o.queue.Add(key)
	}
	o.log.Info(fmt.Sprintf("Resuming the handling of changes, timers and daemons: %d objects queued.", len(keys)))
}
