package chaostest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// objState is what the test's own watch last saw of an object.
type objState struct {
	exists  bool
	handled int // handledStep; -1 when none
}

// tracker follows the objects of ns through an informer of the test's own
// (straight to the API server), so that the workload can wait for the host
// to have handled each change without polling the API server.
type tracker struct {
	mu      sync.Mutex
	objs    map[string]objState
	changed chan struct{} // closed and replaced on every change
}

// track starts the tracker until the test ends and waits for its first
// listing.
func track(t testing.TB, c *cluster) *tracker {
	t.Helper()
	tr := &tracker{objs: map[string]objState{}, changed: make(chan struct{})}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(c.env.Config), 0, ns, nil)
	inf := factory.ForResource(kopfExamples).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { tr.seen(obj, true) },
		UpdateFunc: func(_, obj any) { tr.seen(obj, true) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			tr.seen(obj, false)
		},
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the test's informer did not sync")
	}
	return tr
}

func (tr *tracker) seen(obj any, exists bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	st := objState{exists: exists, handled: -1}
	if exists {
		st.handled = handledStep(u)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.objs[u.GetName()] = st
	close(tr.changed)
	tr.changed = make(chan struct{})
}

// state is the object's state now.
func (tr *tracker) state(name string) (objState, <-chan struct{}) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.objs[name], tr.changed
}

// await waits until cond holds for the object, and returns when it saw
// that; it fails when ctx ends first.
func (tr *tracker) await(ctx context.Context, name, what string, cond func(objState) bool) (time.Time, error) {
	for {
		st, changed := tr.state(name)
		if cond(st) {
			return time.Now(), nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s: not %s (last seen: exists %v, handled step %d)", name, what, st.exists, st.handled)
		}
	}
}

// handled waits until the host completed the object's cycle of spec.step.
func (tr *tracker) handled(ctx context.Context, name string, step int) (time.Time, error) {
	return tr.await(ctx, name, fmt.Sprintf("handled at step %d", step), func(s objState) bool { return s.exists && s.handled >= step })
}

// gone waits until the object is deleted.
func (tr *tracker) gone(ctx context.Context, name string) (time.Time, error) {
	return tr.await(ctx, name, "gone", func(s objState) bool { return !s.exists })
}
