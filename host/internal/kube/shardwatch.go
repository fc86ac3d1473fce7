package kube

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// LeaseEvent is one change of a Lease seen by [Client.WatchLeases].
type LeaseEvent struct {
	Lease Lease
	// Deleted is true when the Lease is gone.
	Deleted bool
}

// WatchLeases follows the Leases of a namespace that match a label
// selector and calls event for each change, until ctx ends (then it
// returns ctx's error). It is one long request: it starts from the
// current state (an added event per Lease that exists, without a
// listing) and, when the API server ends the stream or it fails, starts
// again after retry, from the last version seen (or from the current
// state if that version has expired). Events come from one goroutine, in
// order.
func (c *Client) WatchLeases(ctx context.Context, namespace, selector string, retry time.Duration, event func(LeaseEvent)) error {
	rv := ""
	for {
		next, err := c.watchLeasesOnce(ctx, namespace, selector, rv, event)
		rv = next
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			c.log.Debug(fmt.Sprintf("Watching the Leases in %s again in %s: %v", namespace, retry, err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
}

// watchLeasesOnce runs one watch request until its stream ends, and
// returns the version to go on from ("" after an expired one).
func (c *Client) watchLeasesOnce(ctx context.Context, namespace, selector, rv string, event func(LeaseEvent)) (string, error) {
	info := reqInfo{verb: "watch", resource: gvrString(leasesGVR), namespace: namespace}
	// Not under the request timeout: the stream is meant to stay open.
	w, err := c.dyn.Resource(leasesGVR).Namespace(namespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true,
	})
	if err = wrapAPI(info, err); err != nil {
		return rv, fmt.Errorf("kube: %w", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		obj, ok := ev.Object.(*unstructured.Unstructured)
		switch {
		case ev.Type == watch.Error:
			return "", fmt.Errorf("kube: the Lease watch in %s ended with an error (expired version?)", namespace)
		case !ok:
			continue
		case ev.Type == watch.Bookmark:
			rv = obj.GetResourceVersion()
		default:
			rv = obj.GetResourceVersion()
			event(LeaseEvent{Lease: leaseOf(obj), Deleted: ev.Type == watch.Deleted})
		}
	}
	return rv, nil
}
