package jsondecode

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// withoutManaged parses data whole and removes what dropping managedFields
// at path removes: metadata.managedFields of the event's object, or of
// the object itself.
func withoutManaged(t testing.TB, data []byte, path parsePath) (any, error) {
	t.Helper()
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	drop := func(obj any) {
		if o, ok := obj.(map[string]any); ok {
			if meta, ok := o["metadata"].(map[string]any); ok {
				delete(meta, "managedFields")
			}
		}
	}
	top, _ := v.(map[string]any)
	switch path {
	case pathEvent:
		drop(top["object"])
	case pathResource:
		drop(top)
	}
	return v, nil
}

// managedCases place managedFields first, last, alone and twice, and
// "managedFields" keys where they must stay: elsewhere in the object, in
// the event's envelope, deeper in the metadata, as a value.
var managedCases = []struct {
	name  string
	path  parsePath
	in    string
	drops bool // something is dropped
}{
	{"sample event", pathEvent, sampleEvent, true},
	{"first in metadata", pathEvent, `{"type":"ADDED","object":{"metadata":{"managedFields":[{"manager":"m",` +
		`"fieldsV1":{"f:data":{"k:{\"type\":\"Ready\"}":{}}}}],"name":"a"},"kind":"ConfigMap","apiVersion":"v1"}}`, true},
	{"last, metadata first", pathEvent, `{"object":{"metadata":{"name":"a","managedFields":[]},"spec":{}},"type":"ADDED"}`, true},
	{"alone", pathEvent, `{"type":"ADDED","object":{"metadata":{"managedFields":[{"time":"t"}]}}}`, true},
	{"twice", pathEvent, `{"type":"ADDED","object":{"metadata":{"managedFields":[1],"name":"a","managedFields":[2]}}}`, true},
	{"null and odd values", pathEvent, `{"type":"ADDED","object":{"metadata":{"managedFields":null,"x":` +
		`{"managedFields":"kept"}}}}`, true},
	{"a scalar", pathEvent, `{"type":"ADDED","object":{"metadata":{"managedFields":-1.5e3}}}`, true},
	{"elsewhere in the object", pathEvent, `{"type":"ADDED","object":{"spec":{"managedFields":[1],` +
		`"metadata":{"managedFields":[2]}},"status":{"managedFields":{"a":1}},"managedFields":[3],` +
		`"metadata":{"annotations":{"managedFields":"kept"},"labels":{"managedFields":"x"},"managedFields":[4]}}}`, true},
	{"in the envelope", pathEvent, `{"managedFields":[1],"metadata":{"managedFields":[2]},"type":"ADDED",` +
		`"object":{"metadata":{"managedFields":[3]}}}`, true},
	{"object not an object", pathEvent, `{"type":"ADDED","object":[{"metadata":{"managedFields":[1]}}]}`, false},
	{"metadata not an object", pathEvent, `{"type":"ADDED","object":{"metadata":["managedFields",{"managedFields":1}]}}`, false},
	{"spaces", pathEvent, "{ \"object\" :\n { \"metadata\" : { \"managedFields\" : [ { \"a\" : \"\\u00e9\\\"\" } ] ,\n \"name\" : \"n\" } } }", true},
	{"a resource", pathResource, `{"metadata":{"managedFields":[{}],"name":"x"},"spec":{"metadata":{"managedFields":[]}}}`, true},
	{"not an object at all", pathEvent, `["object",{"metadata":{"managedFields":[]}}]`, false},
}

// TestDropManagedFields: parsed at its path, a document comes without the
// managedFields of its objects' metadata and with everything else.
func TestDropManagedFields(t *testing.T) {
	for _, tc := range managedCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := withoutManaged(t, []byte(tc.in), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseJSONAt([]byte(tc.in), newStringCache(), tc.path)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("parsed\n %#v, %v\nwant\n %#v", got, err, want)
			}
			if whole := mustParse(t, tc.in); reflect.DeepEqual(want, whole) == tc.drops {
				t.Errorf("drops something: %v, want %v", !reflect.DeepEqual(want, whole), tc.drops)
			}
		})
	}
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := parseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDropManagedFieldsErrors: what is dropped must be valid JSON all the
// same (a document is accepted whole or not at all, whatever is dropped).
func TestDropManagedFieldsErrors(t *testing.T) {
	for _, bad := range []string{
		`[1,]`, `{"a" 1}`, `{"a":1,}`, `{1:2}`, `"\x"`, `"\u12"`, "\"a\x01\"", `"open`, `1e400`, `-`, `01`,
		`tru`, `nul`, `[`, `{"a":`, `}`, strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
	} {
		in := `{"type":"ADDED","object":{"metadata":{"managedFields":` + bad + `,"name":"x"}}}`
		if _, err := parseJSON([]byte(in)); err == nil {
			t.Fatalf("%s: parseJSON accepts it", bad)
		}
		if v, err := parseJSONAt([]byte(in), nil, pathEvent); err == nil {
			t.Errorf("%s: dropped without an error: %v", bad, v)
		}
	}
	// At the depth limit, still valid.
	in := `{"object":{"metadata":{"managedFields":` + strings.Repeat("[", maxJSONDepth-3) + strings.Repeat("]", maxJSONDepth-3) + `}}}`
	if _, err := parseJSONAt([]byte(in), nil, pathEvent); err != nil {
		t.Errorf("at the depth limit: %v", err)
	}
}

// FuzzDropManagedFields: parsed as an event or an object with
// managedFields dropped, any input is accepted exactly when it is accepted
// whole, and gives what the whole value gives without them.
func FuzzDropManagedFields(f *testing.F) {
	for _, tc := range managedCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []parsePath{pathEvent, pathResource} {
			want, werr := withoutManaged(t, data, p)
			got, err := parseJSONAt(data, nil, p)
			if (err != nil) != (werr != nil) {
				t.Fatalf("%q at path %d: error %v, whole %v", data, p, err, werr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q at path %d: %#v, want %#v", data, p, got, want)
			}
		}
	})
}

// TestWatchDecoderDropsManagedFields: the decoder drops them when told to,
// and only then.
func TestWatchDecoderDropsManagedFields(t *testing.T) {
	for _, drop := range []bool{false, true} {
		d := NewWatchDecoder((strings.NewReader(sampleEvent + bookmarkEvent)), WatchOptions{DropManagedFields: drop})
		_, obj, err := d.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(obj.(*unstructured.Unstructured).GetManagedFields()); (got == 0) != drop {
			t.Errorf("drop %v: %d managedFields entries", drop, got)
		}
	}
}
