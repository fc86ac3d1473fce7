package kube

// The initial listing as a stream (the API server's WatchList, KEP 3157):
// one watch request with sendInitialEvents=true sends every existing
// object as an ADDED event, then a bookmark annotated
// "k8s.io/initial-events-end" that carries the resource version the
// listing is consistent with. The events go through the watch decoder one
// at a time (without managedFields unless settings.Kube.KeepManagedFields),
// so the listing never exists as one response, decoded whole, beside the
// objects the informer keeps.
//
// It is served to the informer as its LIST (listWatch's list function):
// the reflector then replaces its store with the objects, marks the
// informer synced once they are delivered, and watches from the bookmark's
// resource version, exactly as after a LIST. client-go's own watch-list
// mode (the WatchListClient feature gate) is process-wide and off by
// default in client-go 0.34; this keeps the choice per client
// (settings.Watching.WatchList).

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// lister serves an informer's LIST requests: streamed when
// settings.Watching.WatchList allows and the server has not refused it
// (the first page only: a paginated LIST goes on as one), else as a LIST.
type lister struct {
	c         *Client
	gvr       schema.GroupVersionResource
	namespace string
	desc      string
	ws        watchScope
	hooks     streamHooks // for the stream: no onEnd, which would delay the next watch
	refused   atomic.Bool // the server refused a streamed listing
}

func (l *lister) list(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if l.c.watching.WatchList && opts.Continue == "" && !l.refused.Load() {
		list, err := l.c.streamList(ctx, l.gvr, l.namespace, opts, l.hooks, l.ws)
		if err == nil {
			l.c.log.Debug("listed the objects", "resource", l.desc, "objects", len(list.Items), "streamed", true)
		}
		if err == nil || ctx.Err() != nil {
			return list, err
		}
		if watchListRefused(err) {
			l.refused.Store(true)
			l.c.log.Info("the API server does not stream listings (WatchList); listing instead", "resource", l.desc, "error", err)
		} else {
			l.c.log.Debug("streamed listing failed; listing instead", "resource", l.desc, "error", err)
		}
	}
	return l.c.listJSON(ctx, l.gvr, l.namespace, opts)
}

// errNoInitialEventsEnd: a streamed listing ended before its bookmark.
var errNoInitialEventsEnd = errors.New("the watch ended before the initial-events-end bookmark")

// streamList lists one resource in one namespace as a stream of initial
// events, for a LIST with opts (its selectors and resource version: "0",
// any version, becomes "", the newest, which the watch cache serves
// without a quorum read since Kubernetes 1.31).
func (c *Client) streamList(ctx context.Context, gvr schema.GroupVersionResource, namespace string,
	opts metav1.ListOptions, hooks streamHooks, ws watchScope) (*unstructured.UnstructuredList, error) {
	rv := opts.ResourceVersion
	if rv == "0" {
		rv = ""
	}
	wopts := metav1.ListOptions{
		LabelSelector:        opts.LabelSelector,
		FieldSelector:        opts.FieldSelector,
		ResourceVersion:      rv,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents:    ptr.To(true),
		AllowWatchBookmarks:  true,
	}
	w, err := c.watchJSON(ctx, gvr, namespace, wopts, hooks, ws)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	return initialEvents(ctx, w)
}

// initialEvents collects the ADDED events of w up to the initial-events-end
// bookmark, whose resource version the list gets.
func initialEvents(ctx context.Context, w watch.Interface) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{}, Items: []unstructured.Unstructured{}}
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			return nil, errNoInitialEventsEnd
		}
		switch ev.Type {
		case watch.Added:
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				return nil, fmt.Errorf("an initial event carries a %T", ev.Object)
			}
			list.Items = append(list.Items, *u)
		case watch.Bookmark:
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				return nil, fmt.Errorf("a bookmark without metadata: %w", err)
			}
			if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				list.SetResourceVersion(m.GetResourceVersion())
				return list, nil
			}
		case watch.Error:
			return nil, apierrors.FromObject(ev.Object)
		default:
			return nil, fmt.Errorf("a %s event before the initial-events-end bookmark", ev.Type)
		}
	}
}

// watchListRefused says whether err is the API server's refusal of a
// watch with sendInitialEvents (400 or 422: an older server, or one with
// the WatchList feature gate off), not worth trying again.
func watchListRefused(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsInvalid(err)
}
