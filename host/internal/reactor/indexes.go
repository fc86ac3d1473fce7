package reactor

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/indexing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// Indexes (Kopf's @kopf.index) are kept by the indexing engine. The
// operator feeds it every watch event before the object is queued, so an
// index is complete once the watches of its resources have synced, and it
// holds back the cycles of objects whose resource handlers belong to a
// module whose indexes are not complete yet (at start, and after a swap
// of the module while they are rebuilt), as Kopf's resource handlers wait
// for the indexes to be pre-populated. Activities are not held back, nor
// are webhooks.

// held are the objects whose cycles wait: for indexes (keys), or for the
// listing of their watch (listing, syncing.go).
type held struct {
	mu      sync.Mutex
	keys    map[objectKey]struct{}
	listing map[*kube.Watch][]objectKey
}

// observeIndexes indexes one watch event.
func (o *Operator) observeIndexes(ctx context.Context, res kube.Resource, ev kube.Event) {
	o.indexing.Observe(ctx, res.ResourceRef, res.Status, ev.Object, ev.Type == kube.Deleted)
}

// indexesReady reports whether every module with resource handlers on ref
// has its indexes complete. o.mu is held.
func (o *Operator) indexesReady(ref abi.ResourceRef) bool {
	for _, h := range o.registry.Handlers(ref) {
		switch k := h.Kind(); {
		case k == abi.KindIndex, k.IsWebhook(), k == abi.KindConvert:
		case !o.indexing.Ready(h.Module):
			return false
		}
	}
	return true
}

// hold keeps key until the indexes are ready; it re-checks after adding,
// so that a readiness that came meanwhile does not strand the key.
func (o *Operator) hold(key objectKey, ref abi.ResourceRef) {
	o.held.mu.Lock()
	if o.held.keys == nil {
		o.held.keys = map[objectKey]struct{}{}
	}
	o.held.keys[key] = struct{}{}
	o.held.mu.Unlock()
	if o.indexesReady(ref) {
		o.releaseHeld()
	}
}

// releaseHeld queues every held object again.
func (o *Operator) releaseHeld() {
	o.held.mu.Lock()
	keys := o.held.keys
	o.held.keys = nil
	o.held.mu.Unlock()
	for key := range keys {
		o.queue.Add(key)
	}
}

// fillIndexes fills the indexes that the engine started empty, then marks
// them ready: it waits for the listing of each of their resources, whose
// events the engine indexes as they come, and indexes the objects that
// watches started before (the objects their caches hold). o.mu is not
// held.
func (o *Operator) fillIndexes(ctx context.Context, fills []indexing.Fill, fresh map[string]bool) {
	for _, f := range fills {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			for _, ref := range f.Resources {
				key := refString(ref)
				o.mu.RLock()
				s := o.served[key]
				var w *kube.Watch
				if s != nil {
					w = s.watch
				}
				o.mu.RUnlock()
				if w == nil {
					continue // not served (unresolved): nothing to index
				}
				if err := w.WaitForSync(ctx); err != nil {
					return // stopping, or the watch was dropped by a later swap
				}
				if !fresh[key] {
					o.indexing.Rebuild(ctx, f, ref, s.res.Status, cached(w))
				}
			}
			o.indexing.MarkReady(f)
		}()
	}
}

// cached lists every object a watch's cache holds.
func cached(w *kube.Watch) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	eachCached(w, func(_ string, obj *unstructured.Unstructured) { out = append(out, obj) })
	return out
}

// eachCached calls f with every object a watch's cache holds, and the
// namespace scope of the watch it is listed under ("" for a cluster-wide
// scope): the one loop over the caches that resuming (pausing.go), taking
// objects over (sharding.go) and filling indexes share.
func eachCached(w *kube.Watch, f func(scope string, obj *unstructured.Unstructured)) {
	for _, ns := range w.Namespaces() {
		objs, _ := w.List(ns, nil)
		for _, obj := range objs {
			f(ns, obj)
		}
	}
}
