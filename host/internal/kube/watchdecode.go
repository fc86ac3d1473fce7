package kube

// The informers' watch requests: the dynamic client's WATCH request, its
// stream decoded by jsondecode.WatchDecoder (each event read once, where
// client-go's framer, envelope and object decoders read it several times),
// with an inactivity timer and hooks for the stream's end, its skipped
// events and its ERROR events.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube/jsondecode"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// watchScheme knows the meta/v1 kinds, with which it encodes the list and
// watch requests' query parameters as the dynamic client does.
var watchScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, metaV1)
	return s
}()

var metaV1 = schema.GroupVersion{Version: "v1"}

var watchParams = runtime.NewParameterCodec(watchScheme)

// watchJSON starts a watch of one resource in one namespace ("" for all)
// with the request that the dynamic client's Watch sends, and decodes its
// events with a watchDecoder. Like client-go's Request.Watch, it is not
// held back by the client's rate limiter, and a connection that fails
// before the response (EOF, timeout) gives a watch that ends at once, for
// the informer to start again.
func (c *Client) watchJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace string,
	opts metav1.ListOptions, hooks streamHooks, ws watchScope) (watch.Interface, error) {
	if msgs := rest.IsValidPathSegmentName(namespace); len(msgs) != 0 {
		return nil, fmt.Errorf("invalid namespace %q: %v", namespace, msgs)
	}
	opts.Watch = true
	// A response that does not begin within the inactivity timeout is a
	// stall too (stall.go); once it begins, the decoder watches the stream.
	sctx, begun, cancel := headerDeadline(ctx, hooks.inactivity)
	body, err := c.watchRaw.Get().AbsPath(objectPath(gvr, namespace, "", "")...).
		SpecificallyVersionedParams(&opts, watchParams, metaV1).
		SetHeader("Accept", "application/json").
		Throttle(nil).
		Stream(sctx)
	if !begun() && ctx.Err() == nil {
		cancel()
		if body != nil {
			_ = body.Close()
		}
		hooks.ended()
		c.conns.silentWatch(hooks.inactivity)
		c.log.Warn("watch request unanswered; trying again on a new connection", "resource", ws.String(),
			"inactivity", hooks.inactivity)
		c.stalls.stall(ws)
		return watch.NewEmptyWatch(), nil
	}
	if err != nil {
		cancel()
		hooks.ended()
		if utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
			return watch.NewEmptyWatch(), nil
		}
		return nil, err // as it is, like client-go's: the reflector classifies it
	}
	c.stalls.resume(ws)
	hooks.decode.MaxBytes, hooks.decode.MaxDepth = c.watching.MaxEventBytes, c.watching.MaxEventDepth
	hooks.decode.DropManagedFields = !c.kube.KeepManagedFields
	if hooks.decode.MaxDepth <= 0 {
		hooks.decode.MaxDepth = jsondecode.MaxDepthLimit // the parser's own limit, which would end the stream
	}
	hooks.decode.OnSkipped = func(ev jsondecode.SkippedEvent) { c.reportSkipped(ctx, ws, ev) }
	end := hooks.onEnd
	hooks.onEnd = func() {
		cancel()
		if end != nil {
			end()
		}
	}
	return watch.NewStreamWatcher(newWatchDecoder(body, hooks),
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// streamHooks watch over one watch stream.
type streamHooks struct {
	// inactivity, when above zero, ends a stream on which no event (not
	// even a bookmark) arrived for that long: the decoder closes the body
	// and reports the stream's normal end (io.EOF), so the informer resumes
	// the watch from the last resource version it saw. onInactive, if set,
	// is called then.
	inactivity time.Duration
	onInactive func()
	// onEnd, if set, is called once when the stream ends, however it ends.
	onEnd func()
	// onError, if set, is called with the Status of every ERROR event
	// before the informer sees it (a 410 Gone there makes the informer
	// list again without reporting it to the watch error handler).
	onError func(*metav1.Status)
	// decode caps the events and drops their managedFields (its OnEvent
	// is the decoder's own).
	decode jsondecode.WatchOptions
}

func (h streamHooks) ended() {
	if h.onEnd != nil {
		h.onEnd()
	}
}

// watchDecoder is a watch.Decoder over a JSON watch stream: a
// jsondecode.WatchDecoder, with the stream's inactivity timer, its end
// and its ERROR events reported to hooks.
type watchDecoder struct {
	dec  *jsondecode.WatchDecoder
	body io.ReadCloser

	hooks    streamHooks
	idle     *time.Timer // closes body after hooks.inactivity without an event
	inactive atomic.Bool // idle closed the body
	endOnce  sync.Once
}

func newWatchDecoder(body io.ReadCloser, hooks streamHooks) *watchDecoder {
	d := &watchDecoder{body: body, hooks: hooks}
	opts := hooks.decode
	if hooks.inactivity > 0 {
		d.idle = time.AfterFunc(hooks.inactivity, func() {
			d.inactive.Store(true)
			_ = body.Close()
		})
		opts.OnEvent = func() { d.idle.Reset(hooks.inactivity) }
	}
	d.dec = jsondecode.NewWatchDecoder(body, opts)
	return d
}

// Decode reads the next event. As with client-go's decoder, the stream's
// end between events is io.EOF, its end within one io.ErrUnexpectedEOF, and
// a read error is returned as it is (the StreamWatcher sorts them out); a
// stream ended for inactivity ends with io.EOF.
func (d *watchDecoder) Decode() (watch.EventType, runtime.Object, error) {
	typ, obj, err := d.dec.Decode()
	if err != nil && d.dec.Ended() {
		if d.inactive.Load() {
			if d.hooks.onInactive != nil {
				d.hooks.onInactive()
			}
			err = io.EOF
		}
		d.end()
		return "", nil, err
	}
	if st, ok := obj.(*metav1.Status); ok && typ == watch.Error && d.hooks.onError != nil {
		d.hooks.onError(st)
	}
	return typ, obj, err
}

// Close closes the stream, which ends a Decode under way.
func (d *watchDecoder) Close() {
	d.end()
	_ = d.body.Close()
}

// end stops the inactivity timer and reports the stream's end, once.
func (d *watchDecoder) end() {
	d.endOnce.Do(func() {
		if d.idle != nil {
			d.idle.Stop()
		}
		d.hooks.ended()
	})
}
