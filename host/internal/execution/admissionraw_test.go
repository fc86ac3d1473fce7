package execution_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// A webhook's request built from the review's own JSON (AdmissionInput.Raw
// and OldRaw, passed as they are) says the same as one encoded from the
// decoded objects: body, old, new and diff, on CREATE, UPDATE and DELETE;
// a creation's diff carries the object's bytes as they came.
func TestAdmissionRequestFromRawJSON(t *testing.T) {
	h, err := registry.NewHandler("m", abi.HandlerSpec{ID: "v", Kind: abi.KindValidate, Resource: &abi.ResourceSelector{Name: "kopfexamples"}}, ref)
	if err != nil {
		t.Fatal(err)
	}
	// As the API server sends them: its own key order, integers.
	objRaw := json.RawMessage(`{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"name":"x","namespace":"ns"},"spec":{"n":12345678901,"items":["a","b"]}}`)
	oldRaw := json.RawMessage(`{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"name":"x","namespace":"ns"},"spec":{"n":1,"items":[]}}`)
	decode := func(raw json.RawMessage) map[string]any {
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name     string
		body     json.RawMessage
		old      json.RawMessage
		wantDiff string // for the raw build, as JSON
	}{
		{"create", objRaw, nil, `[{"op":"add","field":[],"new":` + string(objRaw) + `}]`},
		{"update", objRaw, oldRaw, ""},
		{"delete", oldRaw, oldRaw, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := func(withRaw bool) *abi.Request {
				t.Helper()
				in := execution.Input{
					Subject:   execution.NewSubject(ref, false, &unstructured.Unstructured{Object: decode(tt.body)}),
					Admission: &execution.AdmissionInput{Request: abi.AdmissionRequest{UID: "u", Operation: "CREATE"}},
				}
				if tt.old != nil {
					in.Admission.Old = decode(tt.old)
				}
				if withRaw {
					in.Admission.Raw, in.Admission.OldRaw = tt.body, tt.old
				}
				req, err := execution.Request(h, in)
				if err != nil {
					t.Fatal(err)
				}
				return req
			}
			encoded, raw := build(false), build(true)
			if string(raw.Body) != string(tt.body) || string(raw.New) != string(tt.body) || string(raw.Old) != string(tt.old) {
				t.Errorf("the raw build did not pass the review's bytes: body %s, new %s, old %s", raw.Body, raw.New, raw.Old)
			}
			for _, f := range []struct {
				name string
				a, b any
			}{{"body", encoded.Body, raw.Body}, {"new", encoded.New, raw.New}, {"old", encoded.Old, raw.Old}, {"diff", encoded.Diff, raw.Diff}} {
				if !sameJSON(t, f.a, f.b) {
					ja, _ := json.Marshal(f.a)
					jb, _ := json.Marshal(f.b)
					t.Errorf("%s differs:\n encoded %s\n raw     %s", f.name, ja, jb)
				}
			}
			if tt.wantDiff != "" {
				if got, _ := json.Marshal(raw.Diff); !sameJSON(t, json.RawMessage(got), json.RawMessage(tt.wantDiff)) {
					t.Errorf("diff %s, want %s", got, tt.wantDiff)
				}
			}
		})
	}
}

// sameJSON compares two values by their JSON.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	var va, vb any
	da, db := json.NewDecoder(bytes.NewReader(ja)), json.NewDecoder(bytes.NewReader(jb))
	da.UseNumber()
	db.UseNumber()
	if err := da.Decode(&va); err != nil {
		t.Fatal(err)
	}
	if err := db.Decode(&vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}
