package reactor

import (
	"context"
	"fmt"
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

// Acquire queues every cached object the Owner admits and before did not,
// and returns how many cached objects the Owner admits. The objects it
// takes may have been written by their previous owner a moment ago, and
// this replica's watch cache may not have that write yet: so for the
// objects taken it reads the current resourceVersions from the API server
// (one metadata list per watched resource and namespace) and makes each
// object whose cached version is older wait for the watch, as after its
// own patch (settings.Persistence.ConsistencyTimeout). Nothing is read
// when nothing is taken.
func (o *Operator) Acquire(ctx context.Context, before func(uid string) bool) int {
	type scope struct {
		resource, ns string
	}
	taken := map[scope][]*unstructured.Unstructured{}
	resources := map[string]kube.Resource{}
	owned := 0
	o.mu.RLock()
	for _, s := range o.served {
		if s.watch == nil {
			continue
		}
		eachCached(s.watch, func(ns string, obj *unstructured.Unstructured) {
			if !o.owns(obj) {
				return
			}
			owned++
			if before == nil || !before(string(obj.GetUID())) {
				sc := scope{resource: s.res.String(), ns: ns}
				taken[sc] = append(taken[sc], obj)
				resources[sc.resource] = s.res
			}
		})
	}
	o.mu.RUnlock()
	now := time.Now()
	for sc, objs := range taken {
		o.own.lists.Add(1)
		versions, err := o.kube.Versions(ctx, resources[sc.resource], sc.ns)
		if err != nil {
			o.log.Warn(fmt.Sprintf("Sharding: cannot read the versions of the %d objects taken over; they wait "+
				"persistence.consistencyTimeout for the watch instead: %v", len(objs), err))
		}
		for _, obj := range objs {
			key := objectKey{resource: sc.resource, namespace: obj.GetNamespace(), name: obj.GetName()}
			rv, ok := versions[obj.GetNamespace()+"/"+obj.GetName()]
			switch {
			case err != nil:
				rv = unknownVersion // never caught up: the whole consistency timeout
			case !ok || caughtUp(obj.GetResourceVersion(), rv, false):
				rv = ""
			}
			if rv != "" {
				o.mem.with(key, func(m *memory) { m.pending, m.since, m.released = rv, now, false })
			}
			o.queue.Add(key)
		}
	}
	return owned
}

// unknownVersion is a pending version no object has: the object waits the
// whole consistency timeout for the watch.
const unknownVersion = "unknown"

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
