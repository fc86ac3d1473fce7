package offline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
)

const (
	objA = `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"ex","namespace":"default","uid":"u1",
		"annotations":{"kopf.zalando.org/last-handled-configuration":"{}","note":"x"}},"spec":{"field":"a","n":1},"status":{"s":1}}`
	objB = `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"ex","namespace":"default","uid":"u1"},
		"spec":{"field":"b","n":1}}`
)

func TestOfflineRequest(t *testing.T) {
	sel := &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	tests := []struct {
		name     string
		spec     abi.HandlerSpec
		obj, old string
		reason   abi.Reason
		oldJSON  string
		newJSON  string
		diff     string
		check    func(t *testing.T, req *abi.Request)
	}{
		{name: "create", spec: abi.HandlerSpec{ID: "c", Kind: abi.KindCreate, Resource: sel}, obj: objA,
			reason: abi.ReasonCreate, newJSON: `{"metadata":{"annotations":{"note":"x"}},"spec":{"field":"a","n":1}}`,
			diff: `[{"op":"add","field":[],"new":{"metadata":{"annotations":{"note":"x"}},"spec":{"field":"a","n":1}}}]`},
		{name: "update", spec: abi.HandlerSpec{ID: "u", Kind: abi.KindUpdate, Resource: sel}, obj: objB, old: objA,
			reason: abi.ReasonUpdate, oldJSON: `{"metadata":{"annotations":{"note":"x"}},"spec":{"field":"a","n":1}}`,
			newJSON: `{"spec":{"field":"b","n":1}}`,
			diff:    `[{"op":"remove","field":["metadata"],"old":{"annotations":{"note":"x"}}},{"op":"change","field":["spec","field"],"old":"a","new":"b"}]`},
		{name: "field without old", spec: abi.HandlerSpec{ID: "f/spec.field", Kind: abi.KindField, Resource: sel,
			Filters: abi.Filters{Field: "spec.field"}}, obj: objB,
			reason: abi.ReasonCreate, newJSON: `"b"`, diff: `[{"op":"add","field":[],"new":"b"}]`},
		{name: "field with old", spec: abi.HandlerSpec{ID: "f/spec.field", Kind: abi.KindField, Resource: sel,
			Filters: abi.Filters{Field: "spec.field"}}, obj: objB, old: objA,
			reason: abi.ReasonUpdate, oldJSON: `"a"`, newJSON: `"b"`, diff: `[{"op":"change","field":[],"old":"a","new":"b"}]`},
		{name: "event", spec: abi.HandlerSpec{ID: "e", Kind: abi.KindEvent, Resource: sel}, obj: objB, old: objA,
			diff: `null`, check: func(t *testing.T, req *abi.Request) {
				if req.Event == nil || req.Event.Type != "MODIFIED" {
					t.Errorf("event = %+v, want MODIFIED", req.Event)
				}
			}},
		{name: "validate", spec: abi.HandlerSpec{ID: "v", Kind: abi.KindValidate, Resource: sel}, obj: objB,
			newJSON: objB, diff: `[{"op":"add","field":[],"new":{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"ex","namespace":"default","uid":"u1"},"spec":{"field":"b","n":1}}}]`,
			check: func(t *testing.T, req *abi.Request) {
				if req.Admission == nil || req.Admission.Operation != "CREATE" {
					t.Errorf("admission = %+v, want CREATE", req.Admission)
				}
			}},
		{name: "startup", spec: abi.HandlerSpec{ID: "s", Kind: abi.KindStartup}, obj: objB, diff: `null`,
			check: func(t *testing.T, req *abi.Request) {
				if req.Activity != abi.KindStartup || req.Body != nil || req.Name != "" {
					t.Errorf("activity request = %+v, want no object", req)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old []byte
			if tt.old != "" {
				old = []byte(tt.old)
			}
			req, err := offlineRequest(tt.spec, []byte(tt.obj), old)
			if err != nil {
				t.Fatal(err)
			}
			if req.Handler != tt.spec.ID || req.Kind != tt.spec.Kind || req.Reason != tt.reason || !req.Started.Equal(fixedNow) {
				t.Errorf("request = %+v, want handler %s, kind %s, reason %q", req, tt.spec.ID, tt.spec.Kind, tt.reason)
			}
			if !tt.spec.Kind.IsActivity() && (req.Name != "ex" || req.Namespace != "default" || req.UID != "u1" ||
				*req.Resource != (abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true})) {
				t.Errorf("object fields = %s/%s %s %+v", req.Namespace, req.Name, req.UID, req.Resource)
			}
			if tt.check != nil {
				tt.check(t, req)
				return
			}
			compactEqual(t, "old", string(req.Old), tt.oldJSON)
			compactEqual(t, "new", string(req.New), tt.newJSON)
			diff, _ := json.Marshal(req.Diff)
			compactEqual(t, "diff", string(diff), tt.diff)
		})
	}
}

func TestOfflineRequestBadObject(t *testing.T) {
	spec := abi.HandlerSpec{ID: "c", Kind: abi.KindCreate}
	for _, obj := range []string{`[1]`, `null`, `{`} {
		if _, err := offlineRequest(spec, []byte(obj), nil); err == nil {
			t.Errorf("object %s: want an error", obj)
		}
	}
}

// fixedNow is the clock of the offline calls of the tests.
var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// offlineRequest is the request of an offline call, as the execution layer
// builds it.
func offlineRequest(spec abi.HandlerSpec, obj, old []byte) (*abi.Request, error) {
	h, in, err := offlineCall("m", spec, obj, old, "kopf.zalando.org", "", fixedNow)
	if err != nil {
		return nil, err
	}
	return execution.Request(h, in)
}

func compactEqual(t *testing.T, what, got, want string) {
	t.Helper()
	norm := func(s string) string {
		if s == "" {
			return ""
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v in %s", what, err, s)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if norm(got) != norm(want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}
