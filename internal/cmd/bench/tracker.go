package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// progress is how far the objects of a workload are.
type progress struct {
	Objects, Created, Updated int
}

// tracker follows the KopfExamples of one namespace through a watch and
// counts those that exist and those that show each handler's message.
type tracker struct {
	prefix string

	mu      sync.Mutex
	objs    map[string]objState
	p       progress
	changed chan struct{}
	// hook, when set, sees every object the watch delivers (the steady
	// scenario's latency, steady.go), on the informer's goroutine.
	hook atomic.Pointer[func(name string, obj *unstructured.Unstructured)]
}

type objState struct{ created, updated bool }

func newTracker(prefix string) *tracker {
	return &tracker{prefix: prefix, objs: map[string]objState{}, changed: make(chan struct{}, 1)}
}

// observe records the latest state of an object (nil: it is gone).
func (t *tracker) observe(name string, obj *unstructured.Unstructured) {
	if !strings.HasPrefix(name, t.prefix) {
		return
	}
	if h := t.hook.Load(); h != nil && obj != nil {
		(*h)(name, obj)
	}
	t.mu.Lock()
	old, existed := t.objs[name]
	if existed {
		t.p.Objects--
		t.p.Created -= b2i(old.created)
		t.p.Updated -= b2i(old.updated)
	}
	if obj == nil {
		delete(t.objs, name)
	} else {
		st := objState{created: hasMessage(obj, "create_fn"), updated: hasMessage(obj, "update_fn")}
		t.objs[name] = st
		t.p.Objects++
		t.p.Created += b2i(st.created)
		t.p.Updated += b2i(st.updated)
	}
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *tracker) progress() progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p
}

// wait returns when done(progress) holds, ctx ends, or check fails.
func (t *tracker) wait(ctx context.Context, done func(progress) bool, check func() error) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if done(t.progress()) {
			return nil
		}
		select {
		case <-t.changed:
		case <-tick.C:
			if err := check(); err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("%w (progress: %+v)", ctx.Err(), t.progress())
		}
	}
}

// run feeds the tracker from an informer on the namespace's KopfExamples
// until ctx ends; it returns once the informer has synced.
func (t *tracker) run(ctx context.Context, dyn dynamic.Interface, namespace string) error {
	return t.runFor(ctx, dyn, kopfExamples, namespace)
}

// runFor is run for the objects of any resource.
func (t *tracker) runFor(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string) error {
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespace, nil)
	inf := f.ForResource(gvr).Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.observeAny(obj, false) },
		UpdateFunc: func(_, obj any) { t.observeAny(obj, false) },
		DeleteFunc: func(obj any) { t.observeAny(obj, true) },
	})
	if err != nil {
		return fmt.Errorf("watching the namespace: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watching the namespace: the informer did not sync: %w", ctx.Err())
	}
	return nil
}

func (t *tracker) observeAny(obj any, gone bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if gone {
		t.observe(u.GetName(), nil)
		return
	}
	t.observe(u.GetName(), u)
}

func hasMessage(obj *unstructured.Unstructured, handler string) bool {
	msg, _, _ := unstructured.NestedString(obj.Object, "status", handler, "message")
	return msg != ""
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
