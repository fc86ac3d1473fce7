package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// EventType says what happened to a watched object.
type EventType string

// Event types, named as the watch protocol names them.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is one change of a watched object.
type Event struct {
	Type EventType
	// Object is the object as it is now (its last known state when
	// deleted). It is shared with the watch cache: do not modify it.
	Object *unstructured.Unstructured
	// Initial says the object came from the first listing of its
	// namespace (Type is then Added): Kopf's "resume" for objects that
	// existed before the watch started. Objects listed when a followed
	// namespace appears later are initial too; relists after 410 Gone are
	// not.
	Initial bool
}

// Handler receives the events of a [Watch]. Events of one namespace come
// one at a time, in order, from one goroutine; events of different
// namespaces may come concurrently. A Handler must return quickly (queue
// the work elsewhere) and must not call [Watch.Stop].
type Handler func(Event)

// newInformer builds (without running) an informer that lists and watches
// one resource in one namespace ("" for all of them or for a cluster-scoped
// resource).
func (c *Client) newInformer(gvr schema.GroupVersionResource, namespace string) cache.SharedIndexInformer {
	desc := gvrString(gvr)
	if namespace != "" {
		desc += " in " + namespace
	}
	inf := cache.NewSharedIndexInformerWithOptions(c.listWatch(gvr, namespace, desc), &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		ObjectDescription: desc,
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		c.logWatchError(desc, err)
	})
	return inf
}

// listWatch lists and watches one resource in one namespace for an
// informer, with the settings' watching group: every watch request asks
// for bookmarks and carries watching.serverTimeout (when set) as its
// timeoutSeconds; a stream without any event for watching.inactivityTimeout
// is ended; and a watch resumed after its stream ended waits
// watching.reconnectBackoff first. The informer's reflector resumes a
// watch that ended (from the last resource version, without listing) and
// backs off on failed requests.
func (c *Client) listWatch(gvr schema.GroupVersionResource, namespace, desc string) *cache.ListWatch {
	var ended atomic.Int64 // when the last stream ended, in Unix nanoseconds; 0 before the first
	ws := watchScope{resource: gvrString(gvr), namespace: namespace}
	hooks := streamHooks{
		inactivity: c.watching.InactivityTimeout,
		onInactive: func() {
			if c.conns.silentWatch(c.watching.InactivityTimeout) { // a quiet resource, not a stall
				c.log.Info("no event or bookmark on a watch stream while the API server answers; resuming it",
					"resource", desc, "inactivity", c.watching.InactivityTimeout)
				return
			}
			c.log.Warn("watch stream silent; resuming it on a new connection", "resource", desc,
				"inactivity", c.watching.InactivityTimeout)
			c.stalls.stall(ws)
		},
		onEnd:   func() { ended.Store(time.Now().UnixNano()) },
		onError: func(st *metav1.Status) { c.logWatchStatus(desc, st) },
	}
	l := &lister{c: c, gvr: gvr, namespace: namespace, desc: desc, ws: ws, hooks: streamHooks{
		inactivity: hooks.inactivity, onInactive: hooks.onInactive, onError: hooks.onError}}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return l.list(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if last := ended.Load(); last != 0 {
				if !sleep(ctx, time.Until(time.Unix(0, last).Add(c.watching.ReconnectBackoff))) {
					return nil, ctx.Err()
				}
			}
			opts.AllowWatchBookmarks = true
			if t := c.watching.ServerTimeout; t > 0 {
				seconds := int64(t / time.Second)
				opts.TimeoutSeconds = &seconds
			}
			return c.watchJSON(ctx, gvr, namespace, opts, hooks, ws)
		},
	}
}

// logWatchError reports why a watch stopped; the informer then resumes it
// (relisting after 410 Gone) with its own backoff. Expected endings are
// debug messages, the rest warnings.
func (c *Client) logWatchError(desc string, err error) {
	switch {
	case errors.Is(err, context.Canceled):
		// stopped while pausing before a reconnection
	case errors.Is(err, io.EOF), apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		c.log.Debug("watch ended; resuming", "resource", desc, "error", err)
	default:
		c.log.Warn("watch failed; retrying", "resource", desc, "error", err)
	}
}

// logWatchStatus reports an ERROR event of a watch stream. client-go's
// reflector handles one itself (after 410 Gone it lists everything again,
// without calling the watch error handler), so this is the only place the
// host can say so.
func (c *Client) logWatchStatus(desc string, st *metav1.Status) {
	if st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone {
		c.log.Info("watch fell behind the API server's history (410 Gone); listing the objects again",
			"resource", desc, "error", st.Message)
		return
	}
	c.log.Warn("watch stream reported an error; resuming it", "resource", desc,
		"code", st.Code, "reason", st.Reason, "error", st.Message)
}

// eventHandler adapts a [Handler] to the informer's callbacks. Updates that
// bring no new resourceVersion (a relist after 410 Gone) are not passed on.
func eventHandler(h Handler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				h(Event{Type: Added, Object: u, Initial: initial})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			u, ok := newObj.(*unstructured.Unstructured)
			old, _ := oldObj.(*unstructured.Unstructured)
			if ok && (old == nil || old.GetResourceVersion() != u.GetResourceVersion()) {
				h(Event{Type: Modified, Object: u})
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				h(Event{Type: Deleted, Object: u})
			}
		},
	}
}
