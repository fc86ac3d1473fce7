package jsondecode

// The decoders against what they replace: the same bytes through
// client-go's decoding (the dynamic client's watch pipeline,
// unstructured.UnstructuredJSONScheme for lists) must give the same objects,
// and an error exactly where client-go's gives one.

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// clientGoWatchDecoder decodes a watch stream as the dynamic client's
// Watch does (rest.Request.Watch with the dynamic client's negotiated
// serializer): JSON framer, WatchEvent envelope, object decoder.
func clientGoWatchDecoder(t testing.TB, body io.Reader) watch.Decoder {
	t.Helper()
	neg := runtime.NewClientNegotiator(dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer, schema.GroupVersion{})
	objectDecoder, streamingSerializer, framer, err := neg.StreamDecoder("application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	frames := framer.NewFrameReader(io.NopCloser(body))
	return restclientwatch.NewDecoder(streaming.NewDecoder(frames, streamingSerializer), objectDecoder)
}

// decodeWith decodes events until the first error, which it returns.
func decodeWith(d watch.Decoder) ([]decoded, error) {
	var out []decoded
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			return out, err
		}
		out = append(out, decoded{typ, obj})
	}
}

// compareWatchWithClientGo fails unless the decoder and client-go's give
// the same events from stream, and then both the stream's clean end
// (io.EOF) or both an error.
func compareWatchWithClientGo(t *testing.T, stream []byte) {
	t.Helper()
	got, err := decodeWith(NewWatchDecoder(bytes.NewReader(stream), WatchOptions{}))
	want, werr := decodeWith(clientGoWatchDecoder(t, bytes.NewReader(stream)))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\ndecoded %v\nclient-go %v", stream, describeEvents(got), describeEvents(want))
	}
	if (err == io.EOF) != (werr == io.EOF) {
		t.Fatalf("%q: after %d events the decoder ended with %v, client-go with %v", stream, len(got), err, werr)
	}
}

func describeEvents(events []decoded) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		if u, ok := ev.obj.(*unstructured.Unstructured); ok {
			out[i] = string(ev.typ) + " " + u.GetKind() + " " + u.GetName()
		} else {
			out[i] = string(ev.typ) + " " + reflect.TypeOf(ev.obj).String()
		}
	}
	return out
}

// watchSeeds are streams the comparisons start from: the recorded one,
// and events client-go refuses.
var watchSeeds = []string{
	recordedStream, sampleEvent + goneEvent, prettyEvent, "", " \n",
	`{"type":"ADDED","object":{"apiVersion":"v1","kind":"X","metadata":{"name":"n"},"a":[[[[[[1]]]]]]}}`,
	`{"type":"ADDED","object":{"kind":"X",}}`,
	`{"object":{"apiVersion":"v1","kind":"ConfigMap"}}`,
	`{"type":"CHANGED","object":{"apiVersion":"v1","kind":"ConfigMap"}}`,
	`{"type":1,"object":{"apiVersion":"v1","kind":"ConfigMap"}}`,
	`{"type":"ADDED"}`, `{"type":"ADDED","object":null}`, `{"type":"ADDED","object":"x"}`,
	`{"type":"ADDED","object":{"apiVersion":"v1"}}`, `{"type":"ADDED","object":{"apiVersion":"v1","kind":3}}`,
	`{"type":"ADDED","object":{"kind":"ConfigMap"}}`, `{"type":"ADDED","object":{"apiVersion":"a/b/c","kind":"X"}}`,
	`{"type":"ERROR","object":{"apiVersion":"v1","kind":"Status","code":"x"}}`,
	`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","data":{"n":1e400}}}`,
	sampleEvent + sampleEvent[:100],
}

// TestWatchDecoderLikeClientGo runs the comparison over the seeds.
func TestWatchDecoderLikeClientGo(t *testing.T) {
	for _, stream := range watchSeeds {
		compareWatchWithClientGo(t, []byte(stream))
	}
}

// FuzzWatchDecoderLikeClientGo compares the watch decoder with client-go's
// on arbitrary streams.
func FuzzWatchDecoderLikeClientGo(f *testing.F) {
	for _, seed := range watchSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		compareWatchWithClientGo(t, stream)
	})
}

// compareListWithClientGo fails unless DecodeList and client-go's
// unstructured decoder (the dynamic client's List) agree on body: both
// fail, or both build the same list, and with managedFields dropped the
// same list without the items' managedFields.
func compareListWithClientGo(t *testing.T, body []byte) {
	t.Helper()
	got, err := DecodeList(bytes.NewReader(body), false)
	want, werr := clientGoList(body)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: DecodeList error %v, client-go error %v", body, err, werr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nDecodeList %#v\nclient-go  %#v", body, got, want)
	}
	dropped, err := DecodeList(bytes.NewReader(body), true)
	for i := range want.Items {
		unstructured.RemoveNestedField(want.Items[i].Object, "metadata", "managedFields")
	}
	if err != nil || !reflect.DeepEqual(dropped, want) {
		t.Fatalf("%q, dropping managedFields:\nDecodeList %#v, %v\nclient-go  %#v", body, dropped, err, want)
	}
}

// clientGoList decodes a LIST response as the dynamic client's List does.
func clientGoList(body []byte) (*unstructured.UnstructuredList, error) {
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, body)
	if err != nil {
		return nil, err
	}
	if list, ok := obj.(*unstructured.UnstructuredList); ok {
		return list, nil
	}
	return obj.(*unstructured.Unstructured).ToList()
}

// FuzzDecodeListLikeClientGo compares the list decoder with client-go's
// on arbitrary bodies.
func FuzzDecodeListLikeClientGo(f *testing.F) {
	for _, body := range listBodies {
		f.Add([]byte(body))
	}
	for _, body := range []string{"", `[]`, `{"items":{}}`, `{"items":["x"]}`, `{"kind":"List"`, `{"kind":"List"}x`,
		`{"items":[{"a":1e999}]}`, `{"kind":"ConfigMap","apiVersion":"v1"}`, strings.Repeat("[", 10)} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		compareListWithClientGo(t, body)
	})
}
