package reactor

import (
	"context"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// A watch that a swap starts (a resource added again, or first served by
// the new modules) begins with an empty cache, while the objects the
// operator remembers are queued at once to be resumed, and objects listed
// so far are processed as they come. An object missing from a cache that
// does not hold the whole listing yet is not gone: its cycle waits for the
// listing and is queued again then (had it been taken for deleted, its
// memo, daemons and events would be dropped, and an object whose only
// event came before the cache was complete would never be handled).

// awaitListing queues key again once w has delivered its initial listing.
// One goroutine per watch waits; it ends when the listing is complete, the
// watch stops (a later swap dropped it: the keys are resumed when the
// resource comes back) or ctx ends.
func (o *Operator) awaitListing(ctx context.Context, key objectKey, w *kube.Watch) {
	o.held.mu.Lock()
	if o.held.listing == nil {
		o.held.listing = map[*kube.Watch][]objectKey{}
	}
	waiting := o.held.listing[w] != nil
	o.held.listing[w] = append(o.held.listing[w], key)
	o.held.mu.Unlock()
	if waiting {
		return
	}
	o.wg.Add(1) // the caller is a worker: the count is above zero
	go func() {
		defer o.wg.Done()
		err := w.WaitForSync(ctx)
		o.held.mu.Lock()
		keys := o.held.listing[w]
		delete(o.held.listing, w)
		o.held.mu.Unlock()
		if err != nil {
			return
		}
		for _, key := range keys {
			o.queue.Add(key)
		}
	}()
}
