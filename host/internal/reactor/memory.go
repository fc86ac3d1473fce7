package reactor

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// objectKey names one object of one resource; it is the work queue's key.
type objectKey struct {
	resource  string // the resource's GVR string
	namespace string
	name      string
}

// memory is what the operator keeps about one object between cycles. None
// of it survives a restart, and none of it needs to: everything an object
// needs to resume is on the object.
type memory struct {
	// initial: the object was in the initial listing of this process, so an
	// unchanged object gets the resume cause once.
	initial bool
	// handledOnce: every due handler finished once in this process, so the
	// resume cause is spent.
	handledOnce bool
	// memo is unused: memos are kept per module by the executor
	// (execution.Memos), dropped with the object (Operator.process).
	memo json.RawMessage
	// pending is the resourceVersion of our last patch until the watch
	// delivers it; since is when it was sent.
	pending string
	since   time.Time
	// released: our last patch removed our finalizer from an object marked
	// for deletion. The API server then deletes it and answers with the
	// version it had before, which the watch cache still holds: only a
	// strictly newer version (the object held by another finalizer) or its
	// deletion counts as caught up (Kopf's "~which~never~arrives").
	released bool
	// unsent are the writes of a cycle whose handlers ran but whose write
	// failed for a transient reason (execution.Unsent): sent before the
	// object is processed again, so that the handlers do not run twice;
	// unsentReleases says they release the object (see released),
	// unsentHandledOnce that their cycle finished every due handler (see
	// handledOnce).
	unsent                            []persistence.Request
	unsentReleases, unsentHandledOnce bool
	// events waiting for the object's event handlers.
	events []kube.Event
	// essence is the essence of the last state seen, encoded, for objects
	// with timers or daemons (idle clocks).
	essence string
	// tooLarge: the API server refused a write of the object as too large
	// (kube.ErrTooLarge); its diff-base is stored as a digest from then on
	// (persistence.Patch.DigestOnly), so that the write is not refused for
	// ever.
	tooLarge bool
}

// memories holds the memory of every object the operator has seen.
type memories struct {
	mu sync.Mutex
	m  map[objectKey]*memory
}

func newMemories() *memories { return &memories{m: map[objectKey]*memory{}} }

// with runs fn on the memory of key (created if missing) under the lock.
func (ms *memories) with(key objectKey, fn func(*memory)) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	mem, ok := ms.m[key]
	if !ok {
		mem = &memory{}
		ms.m[key] = mem
	}
	fn(mem)
}

// get returns a copy of key's memory.
func (ms *memories) get(key objectKey) memory {
	var out memory
	ms.with(key, func(m *memory) { out = *m })
	return out
}

// take drops key's memory (the object is gone) and returns the events
// still waiting for its event handlers, in one step, so that an event of a
// new object of the same name that arrives meanwhile is not lost with it.
func (ms *memories) take(key objectKey) []kube.Event {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var events []kube.Event
	if m, ok := ms.m[key]; ok {
		events = m.events
	}
	delete(ms.m, key)
	return events
}

// observe updates key's memory for a watch event: it marks objects of the
// initial listing, clears the pending patch once the watch has caught up
// with it, and keeps the event for event handlers when keep is set.
func (ms *memories) observe(key objectKey, ev kube.Event, keep bool) {
	rv := ev.Object.GetResourceVersion()
	ms.with(key, func(m *memory) {
		if ev.Initial {
			m.initial = true
		}
		if keep {
			m.events = append(m.events, ev)
		}
		if caughtUp(rv, m.pending, m.released) {
			m.pending, m.released = "", false
		}
	})
}

// resumeAll makes every known object initial again, as after a restart,
// so that resume handlers run for it once more, and returns their keys.
func (ms *memories) resumeAll() []objectKey {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	keys := make([]objectKey, 0, len(ms.m))
	for key, m := range ms.m {
		m.initial, m.handledOnce = true, false
		keys = append(keys, key)
	}
	return keys
}

// drainEvents takes the events kept for key's event handlers.
func (ms *memories) drainEvents(key objectKey) []kube.Event {
	var out []kube.Event
	ms.with(key, func(m *memory) { out, m.events = m.events, nil })
	return out
}

// stale tells how long to wait before processing key at resourceVersion rv:
// zero when the watch has delivered our last patch (or there is none), or
// when the wait has lasted longer than timeout.
func (ms *memories) stale(key objectKey, rv string, now time.Time, timeout time.Duration) time.Duration {
	var wait time.Duration
	ms.with(key, func(m *memory) {
		if caughtUp(rv, m.pending, m.released) {
			m.pending, m.released = "", false
			return
		}
		if left := timeout - now.Sub(m.since); left > 0 {
			wait = left
			return
		}
		m.pending, m.released = "", false
	})
	return wait
}

// caughtUp reports whether an object seen at resourceVersion rv includes
// our patch that produced pending. Resource versions are opaque strings to
// clients, but every real API server stores etcd revisions in them; when
// both parse as integers a newer version counts as caught up too, which
// spares a wait when another writer changed the object right after us.
// With strict set, the pending version itself does not count (see
// memory.released).
func caughtUp(rv, pending string, strict bool) bool {
	if pending == "" || (rv == pending && !strict) {
		return true
	}
	a, errA := strconv.ParseUint(rv, 10, 64)
	b, errB := strconv.ParseUint(pending, 10, 64)
	return errA == nil && errB == nil && a > b
}
