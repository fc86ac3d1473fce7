package kube

// The informers' watch decoder: it reads the API server's JSON watch stream
// and parses each event once with parseJSON (jsonvalue.go) into the
// *unstructured.Unstructured that client-go's dynamic client would have
// built, instead of client-go's framer, envelope and object decoders, which
// read every event several times (15-18 % of the host's CPU in the
// kopfexamples benchmark).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// watchScheme knows the kinds that the dynamic client decodes into Go
// types rather than unstructured objects (the meta/v1 kinds with apiVersion
// "v1", notably Status, which ERROR events carry); it also encodes the
// watch's query parameters as the dynamic client does.
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
	hooks.maxBytes, hooks.maxDepth = c.watching.MaxEventBytes, c.watching.MaxEventDepth
	hooks.dropManagedFields = !c.kube.KeepManagedFields
	if hooks.maxDepth <= 0 || hooks.maxDepth > maxJSONDepth {
		hooks.maxDepth = maxJSONDepth // the parser's own limit, which would end the stream
	}
	hooks.onSkipped = func(ev SkippedEvent) { c.reportSkipped(ctx, ws, ev) }
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
	// maxBytes and maxDepth, when above zero, cap one event's length and
	// nesting (watchskip.go); an event over a cap is skipped and passed to
	// onSkipped, if set, and the stream goes on.
	maxBytes, maxDepth int
	onSkipped          func(SkippedEvent)
	// onError, if set, is called with the Status of every ERROR event
	// before the informer sees it (a 410 Gone there makes the informer
	// list again without reporting it to the watch error handler).
	onError func(*metav1.Status)
	// dropManagedFields parses the events' objects without their
	// metadata.managedFields (managedfields.go).
	dropManagedFields bool
}

func (h streamHooks) ended() {
	if h.onEnd != nil {
		h.onEnd()
	}
}

// watchDecoder is a watch.Decoder over a JSON watch stream: JSON documents
// {"type": ..., "object": ...} one after another (the API server puts a
// newline after each; the decoder does not rely on it).
type watchDecoder struct {
	streamBuffer
	strings *stringCache

	hooks    streamHooks
	idle     *time.Timer // closes body after hooks.inactivity without an event
	inactive atomic.Bool // idle closed the body
	endOnce  sync.Once
}

// watchBufferSize is the first size of the decoder's buffer; it doubles for
// larger events.
const watchBufferSize = 16 << 10

func newWatchDecoder(body io.ReadCloser, hooks streamHooks) *watchDecoder {
	d := &watchDecoder{streamBuffer: newStreamBuffer(body), strings: newStringCache(), hooks: hooks}
	if hooks.inactivity > 0 {
		d.idle = time.AfterFunc(hooks.inactivity, func() {
			d.inactive.Store(true)
			_ = body.Close()
		})
	}
	return d
}

// Decode reads the next event. As with client-go's decoder, the stream's
// end between events is io.EOF, its end within one io.ErrUnexpectedEOF, and
// a read error is returned as it is (the StreamWatcher sorts them out); a
// stream ended for inactivity ends with io.EOF.
func (d *watchDecoder) Decode() (watch.EventType, runtime.Object, error) {
	frame, skipped, err := d.nextFrame()
	for err == nil && frame == nil { // skipped: over a cap
		if d.idle != nil {
			d.idle.Reset(d.hooks.inactivity)
		}
		if gone := skipped.stub(); gone != nil {
			return watch.Deleted, gone, nil
		}
		frame, skipped, err = d.nextFrame()
	}
	if err != nil {
		if d.inactive.Load() {
			if d.hooks.onInactive != nil {
				d.hooks.onInactive()
			}
			err = io.EOF
		}
		d.end()
		return "", nil, err
	}
	if d.idle != nil {
		d.idle.Reset(d.hooks.inactivity)
	}
	typ, obj, err := decodeEvent(frame, d.strings, d.hooks.dropManagedFields)
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

// nextFrame returns the bytes of the next JSON document, valid until the
// next call; or, for a document over a cap, skips it, reports it to
// hooks.onSkipped and returns what it knows of it instead of bytes.
func (d *watchDecoder) nextFrame() ([]byte, *SkippedEvent, error) {
	fs := frameScanner{maxDepth: d.hooks.maxDepth}
	for {
		d.r = skipJSONSpace(d.buf, d.r, d.w)
		if d.r < d.w {
			if c := d.buf[d.r]; c != '{' && c != '[' {
				return nil, nil, fmt.Errorf("watch stream: invalid character %q at the start of an event", c)
			}
			end, ok := fs.scan(d.buf[d.r:d.w])
			switch {
			case fs.tooDeep:
				return d.skip("depth", d.hooks.maxDepth)
			case d.hooks.maxBytes > 0 && (end > d.hooks.maxBytes || (!ok && d.w-d.r > d.hooks.maxBytes)):
				return d.skip("size", d.hooks.maxBytes)
			case ok:
				frame := d.buf[d.r : d.r+end]
				d.r += end
				return frame, nil, nil
			}
		}
		if err := d.fill(); err != nil {
			if err == io.EOF && d.r < d.w {
				return nil, nil, io.ErrUnexpectedEOF
			}
			return nil, nil, err
		}
	}
}

// skip reads past the event that starts at d.r, which passed a cap,
// keeping only what names its object, and reports it.
func (d *watchDecoder) skip(reason string, limit int) ([]byte, *SkippedEvent, error) {
	s := skipScanner{ev: SkippedEvent{Reason: reason, Limit: limit}}
	for {
		n, done := s.feed(d.buf[d.r:d.w])
		d.r += n
		if done {
			break
		}
		if err := d.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, nil, err
		}
	}
	if d.hooks.onSkipped != nil {
		d.hooks.onSkipped(s.ev)
	}
	return nil, &s.ev, nil
}

func skipJSONSpace(b []byte, i, end int) int {
	for i < end && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// frameScanner finds where a JSON array or object ends by counting
// brackets outside strings. It resumes where it stopped when the data
// grows; the parser checks the rest of the grammar.
type frameScanner struct {
	pos      int // bytes scanned
	depth    int
	inString bool
	escaped  bool
	maxDepth int  // above zero: stop when the nesting goes deeper
	tooDeep  bool // it did
}

// scan goes on scanning b (which starts with the bytes already scanned) and
// returns the length of the document when it is complete.
func (s *frameScanner) scan(b []byte) (int, bool) {
	for ; s.pos < len(b); s.pos++ {
		c := b[s.pos]
		switch {
		case s.escaped:
			s.escaped = false
		case s.inString:
			s.escaped = c == '\\'
			s.inString = c != '"'
		case c == '"':
			s.inString = true
		case c == '{' || c == '[':
			if s.depth++; s.maxDepth > 0 && s.depth > s.maxDepth {
				s.tooDeep = true
				return 0, false
			}
		case c == '}' || c == ']':
			if s.depth--; s.depth == 0 {
				s.pos++
				return s.pos, true
			}
		}
	}
	return 0, false
}

// decodeEvent parses one watch event into its type and object: an
// *unstructured.Unstructured, or the Go type of a meta/v1 kind (the
// *metav1.Status of an ERROR event), as the dynamic client decodes them;
// without the object's metadata.managedFields when dropManaged is set.
func decodeEvent(frame []byte, strings *stringCache, dropManaged bool) (watch.EventType, runtime.Object, error) {
	path := pathPlain
	if dropManaged {
		path = pathEvent
	}
	v, err := parseJSONAt(frame, strings, path)
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	ev, ok := v.(map[string]any)
	if !ok {
		return "", nil, errors.New("unable to decode watch event: not a JSON object")
	}
	typ, _ := ev["type"].(string)
	switch watch.EventType(typ) {
	case watch.Added, watch.Modified, watch.Deleted, watch.Error, watch.Bookmark:
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", ev["type"])
	}
	obj, ok := ev["object"].(map[string]any)
	if !ok {
		return "", nil, fmt.Errorf("unable to decode %s watch event: its object is not a JSON object", typ)
	}
	gvk, err := objectKind(obj)
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode %s watch event: %w", typ, err)
	}
	if watchScheme.Recognizes(gvk) {
		typed, err := decodeTyped(frame, gvk)
		if err != nil {
			return "", nil, fmt.Errorf("unable to decode %s watch event: %w", typ, err)
		}
		return watch.EventType(typ), typed, nil
	}
	return watch.EventType(typ), &unstructured.Unstructured{Object: obj}, nil
}

// objectKind reads an object's apiVersion and kind, which must be there,
// as client-go requires.
func objectKind(obj map[string]any) (schema.GroupVersionKind, error) {
	kind, okKind := obj["kind"].(string)
	apiVersion, okVersion := obj["apiVersion"].(string)
	if (!okKind && obj["kind"] != nil) || (!okVersion && obj["apiVersion"] != nil) {
		return schema.GroupVersionKind{}, errors.New("apiVersion and kind must be strings")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	if kind == "" {
		return schema.GroupVersionKind{}, errors.New("the object has no kind")
	}
	if gv.Version == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("the %s has no apiVersion", kind)
	}
	return gv.WithKind(kind), nil
}

// decodeTyped decodes the object of an event into the Go type of gvk, as
// client-go does, from its own bytes. Only the rare events that carry a
// meta/v1 kind (ERROR events with a Status) come this way.
func decodeTyped(frame []byte, gvk schema.GroupVersionKind) (runtime.Object, error) {
	var env metav1.WatchEvent
	if err := utiljson.Unmarshal(frame, &env); err != nil {
		return nil, err
	}
	obj, err := watchScheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := utiljson.Unmarshal(env.Object.Raw, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", gvk.Kind, err)
	}
	return obj, nil
}
