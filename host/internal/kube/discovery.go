package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// discoveryCache keeps the last discovery snapshot and refreshes it when a
// name is missing, no more often than minRefresh.
type discoveryCache struct {
	client     rest.Interface
	timeout    time.Duration // of each discovery request
	minRefresh time.Duration

	mu      sync.Mutex
	snap    *discovered
	fetched time.Time
}

func newDiscoveryCache(client rest.Interface, timeout, minRefresh time.Duration) *discoveryCache {
	return &discoveryCache{client: client, timeout: timeout, minRefresh: minRefresh}
}

// resolve resolves a selector, refreshing once on a miss.
func (d *discoveryCache) resolve(ctx context.Context, sel abi.ResourceSelector) (Resource, error) {
	var res Resource
	err := d.find(ctx, func(snap discovered) (err error) {
		res, err = snap.resolve(sel)
		return err
	})
	return res, err
}

// lookup finds a group/version/resource, refreshing once on a miss.
func (d *discoveryCache) lookup(ctx context.Context, gvr schema.GroupVersionResource) (Resource, error) {
	var res Resource
	err := d.find(ctx, func(snap discovered) error {
		var ok bool
		if res, ok = snap.lookup(gvr); !ok {
			return fmt.Errorf("resource %s: %w by the cluster", gvrString(gvr), ErrNotServed)
		}
		return nil
	})
	return res, err
}

// find runs fn on the snapshot, and once more on a fresh one when fn says
// the resource is not served and the snapshot is old enough.
func (d *discoveryCache) find(ctx context.Context, fn func(discovered) error) error {
	snap, fresh, err := d.get(ctx, false)
	if err != nil {
		return err
	}
	err = fn(snap)
	if err == nil || !errors.Is(err, ErrNotServed) || fresh {
		return err
	}
	snap, fresh, ferr := d.get(ctx, true)
	if ferr != nil {
		return ferr
	}
	if !fresh {
		return err
	}
	return fn(snap)
}

// get returns the snapshot, fetching it when there is none or when refresh
// is asked and the last fetch is older than minRefresh. fresh says a fetch
// happened in this call.
func (d *discoveryCache) get(ctx context.Context, refresh bool) (snap discovered, fresh bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.snap != nil && (!refresh || time.Since(d.fetched) < d.minRefresh) {
		return *d.snap, false, nil
	}
	if err := ctx.Err(); err != nil {
		return discovered{}, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	fetched, err := discover(ctx, d.client)
	if err != nil {
		if d.snap != nil {
			return *d.snap, false, nil // keep serving the last good snapshot
		}
		return discovered{}, false, wrapAPI(reqInfo{verb: "discover", resource: "api groups"}, err)
	}
	// A failed group (an aggregated API that is down) leaves the others
	// usable, as it should: its resources are simply not found.
	d.snap = fetched
	d.fetched = time.Now()
	return *d.snap, true, nil
}
