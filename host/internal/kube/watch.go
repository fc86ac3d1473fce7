package kube

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Watch lists and watches one resource in a namespace scope, keeps the
// objects in its cache, and passes every change to its [Handler].
type Watch struct {
	c       *Client
	res     Resource
	ns      Namespaces
	handler Handler

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	scopes  map[string]*scope // by namespace; "" for all namespaces
	stopped bool
	nsReg   cache.ResourceEventHandlerRegistration // when following namespaces
}

// scope is one informer: the resource in one namespace, or in all.
type scope struct {
	namespace string
	inf       cache.SharedIndexInformer
	reg       cache.ResourceEventHandlerRegistration
	cancel    context.CancelFunc
	done      chan struct{}
}

// Watch starts watching res in the namespaces of ns and returns at once;
// the handler receives the objects of the initial listing, then every
// change. A cluster-scoped resource, or a cluster-wide ns, is watched with
// one request for all namespaces; plain names with one per namespace;
// patterns with globs or negations follow the cluster's namespaces, starting
// a watch when a matching namespace appears and stopping it when the
// namespace is gone. The watch ends when ctx ends or [Watch.Stop] is called.
func (c *Client) Watch(ctx context.Context, res Resource, ns Namespaces, h Handler) (*Watch, error) {
	if h == nil {
		return nil, fmt.Errorf("kube: watch %s: no handler", res)
	}
	if res.Plural == "" || res.Version == "" {
		return nil, fmt.Errorf("kube: watch: unresolved resource %+v", res.ResourceRef)
	}
	if len(res.Verbs) > 0 && !(slices.Contains(res.Verbs, "list") && slices.Contains(res.Verbs, "watch")) {
		return nil, fmt.Errorf("kube: watch %s: %w: the resource cannot be listed and watched (verbs %v)", res, ErrRequest, res.Verbs)
	}
	w := &Watch{c: c, res: res, ns: ns, handler: h, scopes: map[string]*scope{}, done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(ctx)
	names, plain := ns.Names()
	switch {
	case !res.Namespaced || ns.ClusterWide():
		w.addScope("")
	case plain:
		for _, name := range names {
			w.addScope(name)
		}
	default:
		if err := w.followNamespaces(); err != nil {
			w.cancel()
			return nil, err
		}
	}
	c.register(w)
	go func() {
		<-w.ctx.Done()
		w.shutdown()
	}()
	return w, nil
}

// Resource is the watched resource.
func (w *Watch) Resource() Resource { return w.res }

// Stop ends the watch and waits until the handler is no longer called.
func (w *Watch) Stop() {
	w.cancel()
	<-w.done
}

// Done is closed when the watch has ended.
func (w *Watch) Done() <-chan struct{} { return w.done }

func (w *Watch) shutdown() {
	w.mu.Lock()
	w.stopped = true
	nsReg, scopes := w.nsReg, w.scopes
	w.nsReg, w.scopes = nil, map[string]*scope{}
	w.mu.Unlock()
	if nsReg != nil {
		w.c.nsInf.release(nsReg)
	}
	w.c.unregister(w)
	for _, s := range scopes {
		s.stop()
		w.unstall(s.namespace)
	}
	close(w.done)
}

// addScope starts watching one namespace (or all with ""), unless the
// watch already does or has stopped. Call it without w.mu held.
func (w *Watch) addScope(namespace string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.scopes[namespace] != nil {
		return
	}
	inf := w.c.newInformer(w.res.GVR(), namespace)
	reg, err := inf.AddEventHandler(eventHandler(w.handler))
	if err != nil { // only possible on a stopped informer
		w.c.log.Error("cannot watch", "resource", w.res.String(), "namespace", namespace, "error", err)
		return
	}
	ctx, cancel := context.WithCancel(w.ctx)
	s := &scope{namespace: namespace, inf: inf, reg: reg, cancel: cancel, done: make(chan struct{})}
	w.scopes[namespace] = s
	go func() {
		defer close(s.done)
		inf.RunWithContext(ctx)
	}()
}

// removeScope stops watching one namespace.
func (w *Watch) removeScope(namespace string) {
	w.mu.Lock()
	s := w.scopes[namespace]
	delete(w.scopes, namespace)
	w.mu.Unlock()
	if s != nil {
		s.stop()
		w.unstall(namespace)
	}
}

// unstall forgets the stall mark of a stopped scope: a watch that no longer
// runs is not stalled (the mark would fail readiness for good).
func (w *Watch) unstall(namespace string) {
	if w.c.stalls != nil {
		w.c.stalls.resume(watchScope{resource: gvrString(w.res.GVR()), namespace: namespace})
	}
}

func (s *scope) stop() {
	s.cancel()
	<-s.done
}

// Namespaces lists the namespaces watched now, sorted ("" alone when the
// watch covers all namespaces at once).
func (w *Watch) Namespaces() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.scopes))
	for name := range w.scopes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// HasSynced reports whether the initial listing of every watched namespace
// (and, when following namespaces, of the namespaces) has been delivered
// to the handler.
func (w *Watch) HasSynced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || (w.nsReg != nil && !w.nsReg.HasSynced()) {
		return false
	}
	for _, s := range w.scopes {
		if !s.reg.HasSynced() {
			return false
		}
	}
	return true
}

// WaitForSync waits until [Watch.HasSynced] or ctx ends.
func (w *Watch) WaitForSync(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !w.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube: waiting for the listing of %s: %w", w.res, ctx.Err())
		case <-w.done:
			return fmt.Errorf("kube: watch of %s stopped before its listing was done", w.res)
		case <-t.C:
		}
	}
	return nil
}

// scopeFor returns the synced informer that holds the objects of
// namespace ("" asks for all namespaces), or nil.
func (w *Watch) scopeFor(namespace string) *scope {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.scopes[""]
	if s == nil && namespace != "" {
		s = w.scopes[namespace]
	}
	if s == nil || !s.inf.HasSynced() {
		return nil
	}
	return s
}

// Get returns an object from the watch cache. ok is false when the object
// is not there or the cache does not (yet) cover its namespace. The object
// is shared: do not modify it.
func (w *Watch) Get(namespace, name string) (obj *unstructured.Unstructured, ok bool) {
	if !w.res.Namespaced {
		namespace = ""
	}
	s := w.scopeFor(namespace)
	if s == nil {
		return nil, false
	}
	return s.get(namespace, name)
}

// Lookup returns an object from the watch cache as it is now, also while
// the initial listing is still being delivered (the objects listed so far
// are in the cache; the reactor processes them as they come). When the
// object is not there, complete says whether that means it does not
// exist: the cache covering its namespace holds the whole listing. While
// it does not (a watch just started, a followed namespace not yet listed),
// the object may still come. A stopped watch knows nothing: it answers
// neither found nor complete. The object is shared: do not modify it.
func (w *Watch) Lookup(namespace, name string) (obj *unstructured.Unstructured, found, complete bool) {
	if !w.res.Namespaced {
		namespace = ""
	}
	w.mu.Lock()
	s := w.scopes[""]
	if s == nil && namespace != "" {
		s = w.scopes[namespace]
	}
	following := w.nsReg != nil && !w.nsReg.HasSynced()
	stopped := w.stopped
	w.mu.Unlock()
	switch {
	case stopped:
		return nil, false, false // its cache is gone, not its objects
	case s != nil:
		obj, found = s.get(namespace, name)
		return obj, found, found || s.inf.HasSynced()
	case following:
		return nil, false, false // the namespace may still be found
	}
	return nil, false, true // a namespace not watched: nothing comes
}

func (s *scope) get(namespace, name string) (*unstructured.Unstructured, bool) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := s.inf.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	u, ok := item.(*unstructured.Unstructured)
	return u, ok
}

// List returns the cached objects of namespace ("" for all) that match
// sel (nil for everything), sorted by namespace and name, and whether the
// cache covers that namespace. The objects are shared: do not modify them.
func (w *Watch) List(namespace string, sel labels.Selector) ([]*unstructured.Unstructured, bool) {
	if !w.res.Namespaced {
		namespace = ""
	}
	s := w.scopeFor(namespace)
	if s == nil {
		return nil, false
	}
	return s.list(namespace, sel), true
}

func (s *scope) list(namespace string, sel labels.Selector) []*unstructured.Unstructured {
	if sel == nil {
		sel = labels.Everything()
	}
	var out []*unstructured.Unstructured
	add := func(item any) {
		if u, ok := item.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	if namespace == "" {
		_ = cache.ListAll(s.inf.GetIndexer(), sel, add)
	} else {
		_ = cache.ListAllByNamespace(s.inf.GetIndexer(), namespace, sel, add)
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		if a.GetNamespace() != b.GetNamespace() {
			return cmp.Compare(a.GetNamespace(), b.GetNamespace())
		}
		return cmp.Compare(a.GetName(), b.GetName())
	})
	return out
}

// register makes a watch's cache available to guest reads.
func (c *Client) register(w *Watch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gvr := w.res.GVR()
	c.watches[gvr] = append(c.watches[gvr], w)
}

func (c *Client) unregister(w *Watch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gvr := w.res.GVR()
	c.watches[gvr] = slices.DeleteFunc(c.watches[gvr], func(x *Watch) bool { return x == w })
	if len(c.watches[gvr]) == 0 {
		delete(c.watches, gvr)
	}
}
