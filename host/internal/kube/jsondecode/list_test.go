package jsondecode

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// listBodies are LIST responses as the API server sends them (typed kinds'
// items have no apiVersion and kind), and odd ones.
var listBodies = map[string]string{
	"configmaps": `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[` +
		`{"metadata":{"name":"a","namespace":"ns","managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]},` +
		`"data":{"k":"v","managedFields":"kept"}},{"metadata":{"name":"b","namespace":"ns"}}]}` + "\n",
	"custom resources, items first": `{"items":[` + sampleObject + `,` + sampleObject + `],"apiVersion":"kopf.dev/v1",` +
		`"kind":"KopfExampleList","metadata":{"continue":"abc","remainingItemCount":3,"resourceVersion":"7"}}`,
	"empty":         `{"apiVersion":"v1","items":[],"kind":"ConfigMapList","metadata":{"resourceVersion":"1"}}`,
	"items null":    `{"apiVersion":"v1","items":null,"kind":"ConfigMapList","metadata":{}}`,
	"pretty":        "{\n  \"kind\" : \"List\" ,\n  \"items\" : [ {\"kind\":\"X\",\"apiVersion\":\"v1\"} ,\n {\"metadata\":{\"name\":\"n\\\"]}\"}} ] ,\n \"metadata\" : { }\n}\n\n",
	"items twice":   `{"kind":"List","items":[{"a":1}],"apiVersion":"v1","items":[{"b":2},{"c":[3]}]}`,
	"no apiVersion": `{"kind":"XList","items":[{"metadata":{"managedFields":[]}}]}`,
}

// sampleObject is the object of sampleEvent.
var sampleObject = func() string {
	s := strings.TrimSuffix(sampleEvent, "}\n")
	return s[strings.Index(s, `"object":`)+len(`"object":`):]
}()

// TestDecodeListLikeClientGo: the list decoder builds what client-go's
// unstructured decoder builds (the dynamic client's List), however the
// body arrives; with managedFields dropped, that without the items'
// managedFields.
func TestDecodeListLikeClientGo(t *testing.T) {
	for name, body := range listBodies {
		obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, []byte(body))
		if err != nil {
			t.Fatalf("%s: client-go: %v", name, err)
		}
		want := obj.(*unstructured.UnstructuredList)
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"byte by byte", iotest.OneByteReader}, {"halves", iotest.HalfReader}} {
			got, err := DecodeList((reader.wrap(strings.NewReader(body))), false)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s:\n %#v, %v\nwant\n %#v", name, reader.name, got, err, want)
			}
			got, err = DecodeList((reader.wrap(strings.NewReader(body))), true)
			dropped := want.DeepCopy()
			for i := range dropped.Items {
				unstructured.RemoveNestedField(dropped.Items[i].Object, "metadata", "managedFields")
			}
			if err != nil || !reflect.DeepEqual(got, dropped) {
				t.Errorf("%s, %s, dropping managedFields:\n %#v, %v\nwant\n %#v", name, reader.name, got, err, dropped)
			}
		}
	}
}

// TestDecodeListErrors: a body that is not a whole JSON list is an error,
// wherever it breaks off.
func TestDecodeListErrors(t *testing.T) {
	body := listBodies["custom resources, items first"]
	bad := []string{"", "  ", `[]`, `{"items":{}}`, `{"items":["x"]}`, `{"items":[1,]}`, `{"items":[{}],}`,
		`{"kind":"List"`, `{"kind":"List"}x`, `{"kind" "List"}`, `{kind:1}`, `{"items":[{"a":1e999}]}`, `{"a":tru}`}
	for i := 1; i < len(body)-1; i += 37 {
		bad = append(bad, body[:i])
	}
	for _, in := range bad {
		for _, drop := range []bool{false, true} {
			if list, err := DecodeList((strings.NewReader(in)), drop); err == nil {
				t.Errorf("%q (drop %v): no error, %v", in, drop, list)
			}
		}
	}
}

// TestDecodeListStreams: the decoder holds one item at a time, not the
// body: its buffer stays at its first size over a list of 2,000 objects.
func TestDecodeListStreams(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"9"},"items":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(sampleObject)
	}
	b.WriteString("]}")
	d := listDecoder{streamBuffer: newStreamBuffer(io.NopCloser(&b)), strings: newStringCache(), item: pathResource}
	list, err := d.list()
	if err != nil || len(list.Items) != 2000 {
		t.Fatalf("%d items, %v", len(list.Items), err)
	}
	if len(d.buf) > watchBufferSize {
		t.Errorf("the buffer grew to %d bytes", len(d.buf))
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(list.Items[1999].Object, "metadata", "managedFields"); found {
		t.Errorf("managedFields kept")
	}
}
