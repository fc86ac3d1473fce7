package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// followNamespaces starts and stops per-namespace informers as namespaces
// that match the patterns come and go. Without permission to list
// namespaces it falls back, as Kopf does, to the patterns that are plain
// names.
func (w *Watch) followNamespaces() error {
	reg, err := w.c.nsInf.acquire(w.ctx, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if name := metaName(obj); name != "" && w.ns.Match(name) {
				w.addScope(name)
			}
		},
		DeleteFunc: func(obj any) {
			if name := metaName(obj); name != "" {
				w.removeScope(name)
			}
		},
	})
	if errors.Is(err, ErrForbidden) {
		names := w.ns.plainNames()
		w.c.log.Warn("cannot list namespaces; serving only the namespaces named exactly",
			"patterns", w.ns.String(), "namespaces", names, "error", err)
		for _, name := range names {
			w.addScope(name)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("kube: following namespaces %s: %w", w.ns, err)
	}
	w.mu.Lock()
	w.nsReg = reg
	w.mu.Unlock()
	return nil
}

func metaName(obj any) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if m, ok := obj.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

// nsTracker shares one informer on namespaces between the watches that
// follow them; it runs while at least one watch uses it.
type nsTracker struct {
	c *Client

	mu     sync.Mutex
	refs   int
	inf    cache.SharedIndexInformer
	cancel context.CancelFunc
	done   chan struct{}
}

// acquire adds a handler to the namespace informer, starting it first if
// needed. Before starting it, it checks with one small list that namespaces
// may be listed at all (an error wrapping [ErrForbidden] if not).
func (t *nsTracker) acquire(ctx context.Context, h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inf == nil {
		if err := t.probe(ctx); err != nil {
			return nil, err
		}
		inf := t.c.newInformer(namespacesGVR, "")
		runCtx, cancel := context.WithCancel(context.Background())
		t.inf, t.cancel, t.done = inf, cancel, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			inf.RunWithContext(runCtx)
		}(t.done)
	}
	reg, err := t.inf.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	t.refs++
	return reg, nil
}

func (t *nsTracker) probe(ctx context.Context) error {
	return t.c.retry.do(ctx,
		func(err error) error { return wrapAPI(reqInfo{verb: "list", resource: gvrString(namespacesGVR)}, err) },
		func(ctx context.Context) error {
			_, err := t.c.dyn.Resource(namespacesGVR).List(ctx, metav1.ListOptions{Limit: 1})
			return err
		})
}

// release removes a handler and stops the informer when it was the last.
func (t *nsTracker) release(reg cache.ResourceEventHandlerRegistration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inf == nil {
		return
	}
	_ = t.inf.RemoveEventHandler(reg)
	if t.refs--; t.refs > 0 {
		return
	}
	t.cancel()
	<-t.done
	t.inf = nil
}
