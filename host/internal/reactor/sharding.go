package reactor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// This file is the reactor's side of sharding (engines/sharding): the
// per-object ownership filter beside the host-wide gate (pausing.go).
// Cycles ask it after the gate; the sharding engine calls Release when
// this replica gives objects away and Acquire when it takes some.

// Owner says which objects this replica handles (sharding.Shard).
type Owner interface {
	// Owns reports whether this replica may handle the object with this
	// UID now.
	Owns(uid string) bool
}

// ownership brackets the processing cycles for the hand-over: cycles hold
// mu for reading, Release takes it for writing once, so that every cycle
// that began before the filter narrowed has finished.
type ownership struct {
	mu sync.RWMutex
	// lists counts the version listings of Acquire (requests).
	lists atomic.Int64
}

// ShardingRequests is how many API requests the hand-over of objects made
// in this operator (Acquire's version listings); the membership's own
// Lease requests are counted by whoever gives the shard its Leases.
func (o *Operator) ShardingRequests() int64 { return o.own.lists.Load() }

// owns reports whether this replica handles obj (always without an Owner).
func (o *Operator) owns(obj *unstructured.Unstructured) bool {
	return o.opts.Owner == nil || o.opts.Owner.Owns(string(obj.GetUID()))
}

// processOwned runs the object's cycle if this replica owns it; an object
// it does not own is skipped (its events for event handlers dropped). An
// object gone from the cache is processed as ever: that only forgets it.
func (o *Operator) processOwned(ctx context.Context, key objectKey) {
	if o.opts.Owner == nil {
		o.process(ctx, key)
		return
	}
	o.own.mu.RLock()
	defer o.own.mu.RUnlock()
	if obj := o.cached(key); obj != nil && !o.owns(obj) {
		o.mem.drainEvents(key)
		return
	}
	o.process(ctx, key)
}

// cached returns the object behind key from the watch cache (nil if none),
// also while the cache is still being filled by its first listing: the
// cycles process an object from then on (kube.Watch.Lookup), so ownership
// must be decided from then on too.
func (o *Operator) cached(key objectKey) *unstructured.Unstructured {
	o.mu.RLock()
	defer o.mu.RUnlock()
	s := o.served[key.resource]
	if s == nil || s.watch == nil {
		return nil
	}
	obj, ok, _ := s.watch.Lookup(key.namespace, key.name)
	if !ok {
		return nil
	}
	return obj
}

// foreign reports whether obj, found by a cycle, belongs to another
// replica; its events for event handlers are dropped then. The cycle asks
// it on the object it is about to handle: processOwned's earlier look may
// have found nothing (the object arrived in the cache in between).
func (o *Operator) foreign(key objectKey, obj *unstructured.Unstructured) bool {
	if o.owns(obj) {
		return false
	}
	o.mem.drainEvents(key)
	return true
}

// Release stops handling the objects the Owner no longer admits: it waits
// for the cycles in flight (those that began before the Owner narrowed;
// new ones ask it again), stops the timers and daemons of the objects it
// gave away (daemons with the reason "pausing") and waits until they have
// stopped, and forgets what the process kept of those objects (memo,
// resume state), as a restart would. It returns ctx's error if ctx ends
// first.
func (o *Operator) Release(ctx context.Context) error {
	o.own.mu.Lock()
	o.own.mu.Unlock() //nolint:staticcheck // an empty critical section: waits for the cycles in flight
	var stopping []spawning.Key
	for _, k := range o.spawner.Keys() {
		obj := o.cached(objectKey{resource: k.Resource, namespace: k.Namespace, name: k.Name})
		if obj != nil && o.owns(obj) {
			continue
		}
		if o.spawner.Release(k) > 0 {
			stopping = append(stopping, k)
		}
	}
	released := o.mem.release(func(key objectKey) bool {
		obj := o.cached(key)
		return obj != nil && !o.owns(obj)
	})
	if len(stopping) > 0 {
		o.log.Info(fmt.Sprintf("Sharding: stopping the timers and daemons of %d objects given away.", len(stopping)))
	}
	for _, k := range stopping {
		for o.spawner.Running(k) > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("reactor: %d objects' timers or daemons still running: %w", len(stopping), ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	o.log.Debug(fmt.Sprintf("Sharding: released %d objects.", released))
	return nil
}

// Acquire takes the objects after admits and before did not (the
// sharding engine's Target): the objects a settling view gives to this
// replica. Their previous owners have just stopped and written them a
// moment ago, and this replica's watch cache may not have those writes
// yet; nor may it hold the objects at all, or it may still be delivering
// a first listing made before them. So before admit lets the Owner admit
// them, Acquire reads from the API server the UIDs and current
// resourceVersions of the watched objects (one metadata list per watched
// resource and namespace) and makes each taken object whose cache does
// not have that version yet wait for the watch, as after its own patch
// (settings.Persistence.ConsistencyTimeout). Then it calls admit and
// queues the taken objects. When it cannot read the versions it returns
// the error and admits nothing. It returns how many cached objects the
// Owner admits; with admit nil (nothing changes hands) it only counts
// them.
func (o *Operator) Acquire(ctx context.Context, before, after func(uid string) bool, admit func() bool) (int, error) {
	if admit == nil {
		return o.ownedCached(), nil
	}
	type scope struct {
		res kube.Resource
		ns  string
	}
	var scopes []scope
	o.mu.RLock()
	for _, s := range o.served {
		if s.watch == nil {
			continue
		}
		for _, ns := range s.watch.Namespaces() {
			scopes = append(scopes, scope{res: s.res, ns: ns})
		}
	}
	o.mu.RUnlock()
	taken := map[objectKey]bool{}
	now := time.Now()
	for _, sc := range scopes {
		o.own.lists.Add(1)
		versions, err := o.kube.Versions(ctx, sc.res, sc.ns)
		if err != nil {
			return 0, fmt.Errorf("reactor: reading the versions of the objects taken over: %w", err)
		}
		for nsName, v := range versions {
			if !after(v.UID) || before(v.UID) {
				continue
			}
			ns, name, _ := strings.Cut(nsName, "/")
			key := objectKey{resource: sc.res.String(), namespace: ns, name: name}
			taken[key] = true
			if obj := o.cached(key); obj != nil && caughtUp(obj.GetResourceVersion(), v.ResourceVersion, false) {
				continue
			}
			o.mem.with(key, func(m *memory) { m.pending, m.since, m.released = v.ResourceVersion, now, false })
		}
	}
	if !admit() {
		return 0, nil
	}
	for key := range taken {
		// One not in the cache yet is queued by its watch event; queued
		// now, its cycle would take it for deleted and forget its wait.
		if o.cached(key) != nil {
			o.queue.Add(key)
		}
	}
	return o.ownedCached(), nil
}

// ownedCached counts the cached objects the Owner admits.
func (o *Operator) ownedCached() int {
	owned := 0
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, s := range o.served {
		if s.watch == nil {
			continue
		}
		eachCached(s.watch, func(_ string, obj *unstructured.Unstructured) {
			if o.owns(obj) {
				owned++
			}
		})
	}
	return owned
}

// release forgets, for the objects given away (gone says which), what
// this process kept between their cycles: the memo, the events waiting
// for event handlers, and the spent resume cause, so that the object is
// fresh again if it comes back. It returns how many were forgotten.
func (ms *memories) release(gone func(objectKey) bool) int {
	ms.mu.Lock()
	keys := make([]objectKey, 0, len(ms.m))
	for key := range ms.m {
		keys = append(keys, key)
	}
	ms.mu.Unlock()
	n := 0
	for _, key := range keys {
		if !gone(key) {
			continue
		}
		n++
		ms.with(key, func(m *memory) {
			m.initial, m.handledOnce, m.memo, m.events, m.essence = true, false, nil, nil, ""
		})
	}
	return n
}
