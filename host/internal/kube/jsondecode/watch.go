package jsondecode

// The informers' watch decoder (kube's watchJSON wraps it): it reads the
// API server's JSON watch stream and parses each event once with
// parseJSON (value.go) into the *unstructured.Unstructured that client-go's
// dynamic client would have built, instead of client-go's framer,
// envelope and object decoders, which read every event several times
// (15-18 % of the host's CPU in the kopfexamples benchmark).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// metaScheme knows the kinds that the dynamic client decodes into Go
// types rather than unstructured objects (the meta/v1 kinds with
// apiVersion "v1", notably Status, which ERROR events carry).
var metaScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// unversionedKinds are the meta/v1 kinds that the scheme makes in any
// apiVersion (Status, APIVersions, ...), as client-go decodes them.
var unversionedKinds = func() map[string]bool {
	kinds := map[string]bool{}
	for gvk, t := range metaScheme.AllKnownTypes() {
		if obj, ok := reflect.New(t).Interface().(runtime.Object); ok {
			if unversioned, _ := metaScheme.IsUnversioned(obj); unversioned {
				kinds[gvk.Kind] = true
			}
		}
	}
	return kinds
}()

// WatchOptions tune a WatchDecoder; the zero value decodes every event
// whole.
type WatchOptions struct {
	// MaxBytes and MaxDepth, when above zero, cap one event's length and
	// nesting (skip.go); an event over a cap is skipped and passed to
	// OnSkipped, if set, and the stream goes on. MaxDepth above
	// MaxDepthLimit is MaxDepthLimit.
	MaxBytes, MaxDepth int
	OnSkipped          func(SkippedEvent)
	// OnEvent, if set, is called for every event read whole from the
	// stream, decoded or skipped (kube resets its inactivity timer there).
	OnEvent func()
	// DropManagedFields parses the events' objects without their
	// metadata.managedFields (managedfields.go).
	DropManagedFields bool
}

// MaxDepthLimit is the deepest nesting the parser accepts (encoding/json's
// limit); a deeper event ends the stream unless WatchOptions.MaxDepth
// skips it first.
const MaxDepthLimit = maxJSONDepth

// WatchDecoder is a watch.Decoder over a JSON watch stream: JSON documents
// {"type": ..., "object": ...} one after another (the API server puts a
// newline after each; the decoder does not rely on it). It decodes what
// client-go's streaming watch decoder (a JSON framer, metav1.WatchEvent,
// then unstructured.UnstructuredJSONScheme) decodes, into the same
// objects, reading each event once. It is not safe for concurrent use.
type WatchDecoder struct {
	streamBuffer
	strings *stringCache
	opts    WatchOptions
	ended   bool // the last error came from the stream, not an event
}

// watchBufferSize is the first size of the decoder's buffer; it doubles for
// larger events.
const watchBufferSize = 16 << 10

// NewWatchDecoder returns a decoder of the watch stream body. It does not
// close body: Close is the caller's.
func NewWatchDecoder(body io.Reader, opts WatchOptions) *WatchDecoder {
	if opts.MaxDepth > MaxDepthLimit {
		opts.MaxDepth = MaxDepthLimit
	}
	return &WatchDecoder{streamBuffer: newStreamBuffer(body), strings: newStringCache(), opts: opts}
}

// Decode reads the next event. As with client-go's decoder, the stream's
// end between events is io.EOF, its end within one io.ErrUnexpectedEOF,
// and a read error is returned as it is; [WatchDecoder.Ended] then
// reports true. An event that is not a valid watch event is an error
// that leaves the stream readable. A skipped DELETED event comes as its
// object's identity ([SkippedEvent.Stub]).
func (d *WatchDecoder) Decode() (watch.EventType, runtime.Object, error) {
	frame, skipped, err := d.nextFrame()
	for err == nil && frame == nil { // skipped: over a cap
		if d.opts.OnEvent != nil {
			d.opts.OnEvent()
		}
		if gone := skipped.Stub(); gone != nil {
			return watch.Deleted, gone, nil
		}
		frame, skipped, err = d.nextFrame()
	}
	if err != nil {
		d.ended = true
		return "", nil, err
	}
	if d.opts.OnEvent != nil {
		d.opts.OnEvent()
	}
	return decodeEvent(frame, d.strings, d.opts.DropManagedFields)
}

// Ended reports whether the last error of Decode was the stream's (its
// end, or a read error), after which Decode returns nothing more.
func (d *WatchDecoder) Ended() bool { return d.ended }

// Close does nothing: the stream is the caller's. It completes
// watch.Decoder.
func (d *WatchDecoder) Close() {}

// nextFrame returns the bytes of the next JSON document, valid until the
// next call; or, for a document over a cap, skips it, reports it to
// hooks.onSkipped and returns what it knows of it instead of bytes.
func (d *WatchDecoder) nextFrame() ([]byte, *SkippedEvent, error) {
	fs := frameScanner{maxDepth: d.opts.MaxDepth}
	for {
		d.r = skipJSONSpace(d.buf, d.r, d.w)
		if d.r < d.w {
			if c := d.buf[d.r]; c != '{' && c != '[' {
				return nil, nil, fmt.Errorf("watch stream: invalid character %q at the start of an event", c)
			}
			end, ok := fs.scan(d.buf[d.r:d.w])
			switch {
			case fs.tooDeep:
				return d.skip("depth", d.opts.MaxDepth)
			case d.opts.MaxBytes > 0 && (end > d.opts.MaxBytes || (!ok && d.w-d.r > d.opts.MaxBytes)):
				return d.skip("size", d.opts.MaxBytes)
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
func (d *WatchDecoder) skip(reason string, limit int) ([]byte, *SkippedEvent, error) {
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
	if d.opts.OnSkipped != nil {
		d.opts.OnSkipped(s.ev)
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
	if readsAsKind(ev, true) {
		return decodeLikeClientGo(frame, dropManaged)
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
	if readsAsKind(obj, false) {
		return decodeLikeClientGo(frame, dropManaged)
	}
	gvk, err := objectKind(obj)
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode %s watch event: %w", typ, err)
	}
	if metaScheme.Recognizes(gvk) || unversionedKinds[gvk.Kind] {
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
	obj, err := metaScheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := utiljson.Unmarshal(env.Object.Raw, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", gvk.Kind, err)
	}
	return obj, nil
}

// readsAsKind reports whether a key of m is one that client-go's
// meta-factory (json.DefaultMetaFactory, which reads apiVersion and kind
// with encoding/json, whose keys match regardless of case) reads as
// apiVersion or kind, other than the exact "apiVersion" and "kind" that
// objectKind reads (exact ones too when exact is set: the envelope's
// apiVersion and kind decide whether client-go reads it as a WatchEvent).
// The API server sends no such key; an event with one is decoded by
// client-go's own decoders, so that it decodes as there.
func readsAsKind(m map[string]any, exact bool) bool {
	for k := range m {
		if (exact || (k != "kind" && k != "apiVersion")) &&
			(strings.EqualFold(k, "kind") || strings.EqualFold(k, "apiVersion")) {
			return true
		}
	}
	return false
}

// clientGoWatch holds the dynamic client's watch decoders (its negotiated
// serializer's stream serializer, framer and object decoder).
var clientGoWatch = sync.OnceValues(func() (*runtime.StreamSerializerInfo, runtime.Decoder) {
	neg := dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer
	info, _ := runtime.SerializerInfoForMediaType(neg.SupportedMediaTypes(), runtime.ContentTypeJSON)
	return info.StreamSerializer, neg.DecoderToVersion(info.Serializer, schema.GroupVersion{})
})

// decodeLikeClientGo decodes one event (a whole JSON document) with the
// dynamic client's watch decoders, as rest.Request.Watch does; without the
// object's metadata.managedFields when dropManaged is set.
func decodeLikeClientGo(frame []byte, dropManaged bool) (watch.EventType, runtime.Object, error) {
	stream, objects := clientGoWatch()
	frames := stream.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(frame)))
	typ, obj, err := restclientwatch.NewDecoder(streaming.NewDecoder(frames, stream.Serializer), objects).Decode()
	if u, ok := obj.(*unstructured.Unstructured); ok && dropManaged {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	return typ, obj, err
}
