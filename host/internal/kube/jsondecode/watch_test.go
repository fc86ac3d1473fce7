package jsondecode

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// sampleEvent is a watch event as the API server sends it for a
// kopfexample that the operator has handled.
const sampleEvent = `{"type":"MODIFIED","object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
	`"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":` +
	`"{\"spec\":{\"duration\":\"1m\",\"field\":\"value\",\"items\":[\"item1\",\"item2\"]}}\n"},` +
	`"creationTimestamp":"2025-11-22T08:00:01Z","finalizers":["kopf.zalando.org/KopfFinalizerMarker"],` +
	`"generation":2,"labels":{"app":"bench","idx":"1234"},"managedFields":[{"apiVersion":"kopf.dev/v1",` +
	`"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:duration":{},"f:field":{},"f:items":{}}},` +
	`"manager":"bench","operation":"Update","time":"2025-11-22T08:00:01Z"},{"apiVersion":"kopf.dev/v1",` +
	`"fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:create_fn":{".":{},"f:message":{}}}},` +
	`"manager":"kopf-wasm","operation":"Update","subresource":"status","time":"2025-11-22T08:00:02Z"}],` +
	`"name":"kex-1234","namespace":"bench","resourceVersion":"987654","uid":"4b1e5f0c-8e0a-4a59-9d6e-2f7c1a0b3c4d"},` +
	`"spec":{"duration":"1m","field":"value","items":["item1","item2"],"ratio":0.75,"count":-3},` +
	`"status":{"create_fn":{"message":"created \u00e9t\u00e9 \ud83d\ude00"}}}}` + "\n"

const (
	bookmarkEvent = `{"type":"BOOKMARK","object":{"kind":"KopfExample","apiVersion":"kopf.dev/v1",` +
		`"metadata":{"resourceVersion":"987700","creationTimestamp":null}}}` + "\n"
	goneEvent = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},` +
		`"status":"Failure","message":"too old resource version: 1 (987000)","reason":"Expired","code":410}}` + "\n"
	// prettyEvent spreads over lines and is followed by another event on
	// the same line.
	prettyEvent = "{\n  \"type\": \"ADDED\",\n  \"object\": {\n    \"apiVersion\": \"v1\",\n" +
		"    \"kind\": \"ConfigMap\",\n    \"metadata\": {\"name\": \"a]}\\\"{\", \"resourceVersion\": \"5\"},\n" +
		"    \"data\": {\"k\": \"[{\"}\n  }\n}" +
		`{"type":"DELETED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}}` + "\r\n\n"
)

// recordedStream holds several events, the last an ERROR 410.
const recordedStream = sampleEvent + bookmarkEvent + prettyEvent + "  \n" + goneEvent

type decoded struct {
	typ watch.EventType
	obj runtime.Object
}

// decodeAll decodes events from r until an error, which it returns.
func decodeAll(r io.Reader) ([]decoded, error) {
	d := NewWatchDecoder((r), WatchOptions{})
	var out []decoded
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			return out, err
		}
		out = append(out, decoded{typ, obj})
	}
}

func TestWatchDecoder(t *testing.T) {
	events, err := decodeAll(strings.NewReader(recordedStream))
	if err != io.EOF {
		t.Fatalf("after %d events: %v, want io.EOF itself", len(events), err)
	}
	var types []watch.EventType
	for _, ev := range events {
		types = append(types, ev.typ)
	}
	want := []watch.EventType{watch.Modified, watch.Bookmark, watch.Added, watch.Deleted, watch.Error}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("event types %v, want %v", types, want)
	}
	kex := events[0].obj.(*unstructured.Unstructured)
	if kex.GetName() != "kex-1234" || kex.GetResourceVersion() != "987654" || kex.GetGeneration() != 2 {
		t.Errorf("object %s rv %s generation %d", kex.GetName(), kex.GetResourceVersion(), kex.GetGeneration())
	}
	if msg, _, _ := unstructured.NestedString(kex.Object, "status", "create_fn", "message"); msg != "created été 😀" {
		t.Errorf("status message %q", msg)
	}
	if rv := events[1].obj.(*unstructured.Unstructured).GetResourceVersion(); rv != "987700" {
		t.Errorf("bookmark resourceVersion %q", rv)
	}
	if name := events[2].obj.(*unstructured.Unstructured).GetName(); name != `a]}"{` {
		t.Errorf("pretty event's name %q", name)
	}
	status, ok := events[4].obj.(*metav1.Status)
	if !ok {
		t.Fatalf("ERROR event object is %T, want *metav1.Status", events[4].obj)
	}
	if err := apierrors.FromObject(status); !apierrors.IsResourceExpired(err) || status.Code != 410 {
		t.Errorf("ERROR event gives %v (code %d), want 410 Expired", err, status.Code)
	}
}

// TestWatchDecoderByteByByte reads the stream one byte per Read: events
// split across reads decode as when they come whole.
func TestWatchDecoderByteByByte(t *testing.T) {
	whole, err := decodeAll(strings.NewReader(recordedStream))
	if err != io.EOF {
		t.Fatal(err)
	}
	split, err := decodeAll(iotest.OneByteReader(strings.NewReader(recordedStream)))
	if err != io.EOF {
		t.Fatalf("after %d events: %v, want io.EOF", len(split), err)
	}
	if !reflect.DeepEqual(whole, split) {
		t.Errorf("events differ when read byte by byte")
	}
	// A reader that returns its last bytes with io.EOF.
	split, err = decodeAll(iotest.DataErrReader(strings.NewReader(recordedStream)))
	if err != io.EOF || !reflect.DeepEqual(whole, split) {
		t.Errorf("with data and EOF together: %d events, %v", len(split), err)
	}
}

// TestWatchDecoderLargeEvent decodes an event larger than the buffer,
// which grows for it and shrinks back afterwards.
func TestWatchDecoderLargeEvent(t *testing.T) {
	big := strings.Repeat("x", 5*watchBufferSize)
	stream := `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","data":{"big":"` + big + `"}}}` +
		"\n" + bookmarkEvent
	d := NewWatchDecoder((iotest.HalfReader(strings.NewReader(stream))), WatchOptions{})
	_, obj, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.(*unstructured.Unstructured).Object, "data", "big"); got != big {
		t.Errorf("the large value came back with %d bytes", len(got))
	}
	if typ, _, err := d.Decode(); typ != watch.Bookmark || err != nil {
		t.Errorf("then %s, %v; want the BOOKMARK", typ, err)
	}
	if _, _, err := d.Decode(); err != io.EOF {
		t.Errorf("then %v, want io.EOF", err)
	}
	if len(d.buf) != watchBufferSize {
		t.Errorf("the buffer kept %d bytes, want %d", len(d.buf), watchBufferSize)
	}
}

func TestWatchDecoderStreamEnds(t *testing.T) {
	readErr := errors.New("read tcp: connection reset by peer")
	cases := []struct {
		name   string
		stream io.Reader
		events int
		err    error
	}{
		{"empty", strings.NewReader(""), 0, io.EOF},
		{"only whitespace", strings.NewReader(" \n\n"), 0, io.EOF},
		{"after an event", strings.NewReader(sampleEvent + "\n "), 1, io.EOF},
		{"truncated", strings.NewReader(sampleEvent + sampleEvent[:100]), 1, io.ErrUnexpectedEOF},
		{"truncated in a string", strings.NewReader(`{"type":"ADDED","object":{"a":"}`), 0, io.ErrUnexpectedEOF},
		{"read error", io.MultiReader(strings.NewReader(sampleEvent+sampleEvent[:10]), iotest.ErrReader(readErr)),
			1, readErr},
	}
	for _, tc := range cases {
		events, err := decodeAll(tc.stream)
		if len(events) != tc.events || err != tc.err {
			t.Errorf("%s: %d events, then %v; want %d, then %v itself", tc.name, len(events), err, tc.events, tc.err)
		}
	}
}

func TestWatchDecoderInvalidEvents(t *testing.T) {
	cases := map[string]string{
		"garbage":        "hello\n",
		"a number":       "12\n",
		"not an object":  "[1,2]\n",
		"bad JSON":       `{"type":"ADDED","object":{"kind":"X",}}`,
		"no type":        `{"object":{"apiVersion":"v1","kind":"ConfigMap"}}`,
		"bad type":       `{"type":"CHANGED","object":{"apiVersion":"v1","kind":"ConfigMap"}}`,
		"type no string": `{"type":1,"object":{"apiVersion":"v1","kind":"ConfigMap"}}`,
		"no object":      `{"type":"ADDED"}`,
		"null object":    `{"type":"ADDED","object":null}`,
		"string object":  `{"type":"ADDED","object":"x"}`,
		"no kind":        `{"type":"ADDED","object":{"apiVersion":"v1"}}`,
		"kind not text":  `{"type":"ADDED","object":{"apiVersion":"v1","kind":3}}`,
		"no apiVersion":  `{"type":"ADDED","object":{"kind":"ConfigMap"}}`,
		"bad apiVersion": `{"type":"ADDED","object":{"apiVersion":"a/b/c","kind":"X"}}`,
		"no version":     `{"type":"ADDED","object":{"apiVersion":"group/","kind":"X"}}`,
		"bad Status":     `{"type":"ERROR","object":{"apiVersion":"v1","kind":"Status","code":"x"}}`,
	}
	for name, stream := range cases {
		events, err := decodeAll(strings.NewReader(stream))
		if len(events) != 0 || err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
			t.Errorf("%s: %d events, %v; want a decoding error", name, len(events), err)
		}
	}
}

// BenchmarkWatchDecoder compares the decoder with client-go's pipeline
// (framer, WatchEvent envelope, object decoder).
func BenchmarkWatchDecoder(b *testing.B) {
	stream := strings.Repeat(sampleEvent, 100)
	b.Run("watchDecoder", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		for b.Loop() {
			benchDecode(b, NewWatchDecoder((strings.NewReader(stream)), WatchOptions{}), 100)
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		ser := json.NewSerializerWithOptions(json.DefaultMetaFactory, metaScheme, metaScheme, json.SerializerOptions{})
		for b.Loop() {
			frames := json.Framer.NewFrameReader(io.NopCloser(strings.NewReader(stream)))
			benchDecode(b, restclientwatch.NewDecoder(streaming.NewDecoder(frames, ser), unstructured.UnstructuredJSONScheme), 100)
		}
	})
}

func benchDecode(b *testing.B, d watch.Decoder, want int) {
	for n := 0; ; n++ {
		if _, _, err := d.Decode(); err != nil {
			if err != io.EOF || n != want {
				b.Fatal(n, err)
			}
			return
		}
	}
}

// TestWatchDecoderCaps skips events over the size or depth cap, whole,
// reports the object they were about, and decodes the events around them.
func TestWatchDecoderCaps(t *testing.T) {
	const maxBytes, maxDepth = 4096, 20
	bigEvent := `{"type":"MODIFIED","object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
		`"metadata":{"annotations":{"a":"{\"x\":[1]}"},"managedFields":[{"f:spec":{"name":"not-this"}}],` +
		`"name":"big","namespace":"ns1","resourceVersion":"42","uid":"u-1"},` +
		`"spec":{"blob":"` + strings.Repeat("x\\\"{[", 3*maxBytes) + `"}}}` + "\n"
	deepEvent := `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep",` +
		`"namespace":"ns2"},"data":` + strings.Repeat(`{"a":[`, 15) + "1" + strings.Repeat("]}", 15) + "}}\n"
	// Exactly at the depth cap: decoded.
	edgeEvent := `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"edge"},"data":` +
		strings.Repeat(`[`, maxDepth-2) + strings.Repeat("]", maxDepth-2) + "}}\n"
	// A DELETED event over the cap comes as the object's identity alone,
	// so the cache drops it.
	bigDeleted := strings.Replace(strings.Replace(bigEvent, "MODIFIED", "DELETED", 1), `"big"`, `"big2"`, 1)
	stream := sampleEvent + bigEvent + bookmarkEvent + deepEvent + edgeEvent + bigDeleted + goneEvent
	for _, reader := range []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"byte by byte", iotest.OneByteReader},
		{"halves", iotest.HalfReader},
	} {
		t.Run(reader.name, func(t *testing.T) {
			var skipped []SkippedEvent
			opts := WatchOptions{MaxBytes: maxBytes, MaxDepth: maxDepth,
				OnSkipped: func(ev SkippedEvent) { skipped = append(skipped, ev) }}
			d := NewWatchDecoder((reader.wrap(strings.NewReader(stream))), opts)
			var names []string
			var gone *unstructured.Unstructured
			for {
				typ, obj, err := d.Decode()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("after %v: %v", names, err)
				}
				if u, ok := obj.(*unstructured.Unstructured); ok {
					names = append(names, string(typ)+" "+u.GetName())
					if typ == watch.Deleted {
						gone = u
					}
				} else {
					names = append(names, string(typ))
				}
			}
			if want := []string{"MODIFIED kex-1234", "BOOKMARK ", "ADDED edge", "DELETED big2", "ERROR"}; !reflect.DeepEqual(names, want) {
				t.Errorf("decoded %q, want %q", names, want)
			}
			want := []SkippedEvent{
				{Reason: "size", Bytes: len(bigEvent) - 1, Depth: 6, Limit: maxBytes, Type: "MODIFIED",
					APIVersion: "kopf.dev/v1", Kind: "KopfExample", Namespace: "ns1", Name: "big", UID: "u-1", ResourceVersion: "42"},
				{Reason: "depth", Bytes: len(deepEvent) - 1, Depth: 2 + 30, Limit: maxDepth, Type: "ADDED",
					APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns2", Name: "deep"},
				{Reason: "size", Bytes: len(bigDeleted) - 1, Depth: 6, Limit: maxBytes, Type: "DELETED",
					APIVersion: "kopf.dev/v1", Kind: "KopfExample", Namespace: "ns1", Name: "big2", UID: "u-1", ResourceVersion: "42"},
			}
			if !reflect.DeepEqual(skipped, want) {
				t.Errorf("skipped\n%+v\nwant\n%+v", skipped, want)
			}
			wantGone := map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{
				"name": "big2", "namespace": "ns1", "uid": "u-1", "resourceVersion": "42"}}
			if gone == nil || !reflect.DeepEqual(gone.Object, wantGone) {
				t.Errorf("the deletion came as %v, want %v", gone, wantGone)
			}
			if len(d.buf) > 4*watchBufferSize {
				t.Errorf("the buffer kept %d bytes after skipping", len(d.buf))
			}
		})
	}
}

// TestWatchDecoderCapTruncated: a stream that ends within a skipped event
// ends as a truncated one does.
func TestWatchDecoderCapTruncated(t *testing.T) {
	stream := `{"type":"ADDED","object":{"metadata":{"name":"x"},"spec":"` + strings.Repeat("y", 10000)
	var skipped []SkippedEvent
	d := NewWatchDecoder((strings.NewReader(stream)), WatchOptions{MaxBytes: 2048,
		OnSkipped: func(ev SkippedEvent) { skipped = append(skipped, ev) }})
	if _, _, err := d.Decode(); err != io.ErrUnexpectedEOF {
		t.Errorf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if len(skipped) != 0 {
		t.Errorf("reported %+v for an event that never ended", skipped)
	}
}

func TestSkippedEventMessage(t *testing.T) {
	cases := []struct {
		ev   SkippedEvent
		want string
	}{
		{SkippedEvent{Reason: "size", Bytes: 20 << 20, Limit: 16 << 20, Type: "MODIFIED", Namespace: "ns", Name: "a", ResourceVersion: "7"},
			"Skipped a watch event (MODIFIED, resourceVersion 7) of ns/a: 20971520 bytes, over watching.maxEventBytes (16777216); its handlers do not see this version. Shrink the object, or raise watching.maxEventBytes."},
		{SkippedEvent{Reason: "depth", Depth: 200, Limit: 100},
			"Skipped a watch event of an unnamed object: nested 200 levels deep, over watching.maxEventDepth (100); its handlers do not see this version. Shrink the object, or raise watching.maxEventDepth."},
	}
	for _, tc := range cases {
		if got := tc.ev.Message(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// FuzzWatchDecoder decodes arbitrary streams with and without small caps:
// neither may panic, and with caps the decoder yields the same events as
// without, minus skipped ones (a DELETED one may come as a stub), and ends
// with the same error unless it ended within a skipped event.
func FuzzWatchDecoder(f *testing.F) {
	for _, seed := range []string{recordedStream, sampleEvent + goneEvent, prettyEvent,
		`{"type":"ADDED","object":{"apiVersion":"v1","kind":"X","metadata":{"name":"n"},"a":[[[[[[1]]]]]]}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		all, errAll := decodeAll(strings.NewReader(string(stream)))
		skipped := 0
		d := NewWatchDecoder((strings.NewReader(string(stream))), WatchOptions{MaxBytes: 1024, MaxDepth: 6,
			OnSkipped: func(SkippedEvent) { skipped++ }})
		var capped []decoded
		var errCapped error
		for {
			typ, obj, err := d.Decode()
			if err != nil {
				errCapped = err
				break
			}
			capped = append(capped, decoded{typ, obj})
		}
		i := 0
		for _, ev := range capped {
			for i < len(all) && !reflect.DeepEqual(all[i], ev) && !(ev.typ == watch.Deleted && all[i].typ == watch.Deleted) {
				i++
			}
			if i == len(all) {
				if errAll != io.EOF {
					break // without caps it stopped at an error, maybe within an event skipped with caps
				}
				t.Fatalf("with caps the decoder gave %v, which it did not give without", ev)
			}
			i++
		}
		if len(capped)+skipped < len(all) && errCapped == errAll {
			t.Fatalf("with caps %d events and %d skipped, without %d", len(capped), skipped, len(all))
		}
	})
}
