package abi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden fixtures in testdata/")

func ptr[T any](v T) *T { return &v }

// golden pairs each fixture in testdata/ with the Go value it encodes. The
// host's tests decode these files and the guest SDK's tests produce them, so
// both sides agree byte for byte (json.MarshalIndent with two spaces, then a
// newline).
var golden = []struct {
	file  string
	value any
}{
	{"manifest.json", &Manifest{
		ABIVersion: Version,
		Module:     ModuleInfo{Name: "kopfexample", Version: "1.0.0"},
		Handlers: []HandlerSpec{
			{ID: "create_fn", Kind: KindCreate, Resource: &ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
				Options: Options{Retries: 3, Backoff: 5, Param: json.RawMessage(`{"greeting":"hello"}`)}},
			{ID: "update_fn", Kind: KindUpdate, Resource: &ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
				Filters: Filters{Labels: map[string]MetaFilter{"app": {Value: ptr("demo")}, "skip": {Absent: true}}}},
			{ID: "delete_fn", Kind: KindDelete, Resource: &ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
				Options: Options{Errors: ErrorsPermanent, Timeout: 60}},
			{ID: "field_fn/spec.field", Kind: KindField, Resource: &ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
				Filters: Filters{Field: "spec.field", New: &ValueFilter{Present: true}, Annotations: map[string]MetaFilter{"owner": {Present: true}}}},
			{ID: "ping", Kind: KindTimer, Resource: &ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
				Options: Options{Interval: 10, Idle: 5, Sharp: true}},
			{ID: "monitor", Kind: KindDaemon, Resource: &ResourceSelector{Version: "v1", Name: "pods"},
				Filters: Filters{When: true}, Options: Options{InitialDelay: 1, CancellationTimeout: 3}},
			{ID: "check", Kind: KindValidate, Resource: &ResourceSelector{Group: "kopf.dev", Name: "kopfexamples"},
				Options: Options{Operations: []string{"CREATE", "UPDATE"}}},
			{ID: "configure", Kind: KindStartup},
		},
		Permissions: Permissions{
			Kubernetes: []KubePermission{{Group: "", Resource: "pods", Verbs: []string{"get", "list", "create"}}},
			Hosts:      []string{"api.example.com"},
		},
	}},
	{"request-update.json", &Request{
		Handler:   "update_fn",
		Kind:      KindUpdate,
		Reason:    ReasonUpdate,
		Resource:  &ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
		Body:      json.RawMessage(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"kopf-example-1","namespace":"default","uid":"6a2c4f0e-0000-4000-8000-000000000001","labels":{"app":"demo"}},"spec":{"field":"new"}}`),
		Name:      "kopf-example-1",
		Namespace: "default",
		UID:       "6a2c4f0e-0000-4000-8000-000000000001",
		Old:       json.RawMessage(`{"spec":{"field":"old"}}`),
		New:       json.RawMessage(`{"spec":{"field":"new"}}`),
		Diff:      []DiffItem{{Op: DiffChange, Field: []string{"spec", "field"}, Old: json.RawMessage(`"old"`), New: json.RawMessage(`"new"`)}},
		Retry:     2,
		Started:   time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Runtime:   12.5,
		Memo:      json.RawMessage(`{"seen":1}`),
	}},
	{"response-success.json", &Response{
		Outcome: Outcome{Status: OutcomeSuccess},
		Result:  json.RawMessage(`{"message":"hello"}`),
		Patch: &Patch{
			Merge: json.RawMessage(`{"metadata":{"labels":{"handled":"yes"}}}`),
			JSON:  []JSONPatchOp{{Op: "add", Path: "/spec/items/-", Value: json.RawMessage(`"x"`)}},
		},
		Memo: json.RawMessage(`{"seen":2}`),
	}},
	{"response-temporary.json", &Response{
		Outcome: Outcome{Status: OutcomeTemporary, Message: "not ready yet", Delay: ptr(5.0)},
	}},
	{"request-validate.json", &Request{
		Handler:  "check",
		Kind:     KindValidate,
		Resource: &ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
		Body:     json.RawMessage(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"kopf-example-1","namespace":"default"},"spec":{"field":""}}`),
		Name:     "kopf-example-1", Namespace: "default",
		New: json.RawMessage(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"kopf-example-1","namespace":"default"},"spec":{"field":""}}`),
		Admission: &AdmissionRequest{UID: "req-1", Operation: "CREATE", DryRun: true,
			UserInfo: json.RawMessage(`{"username":"admin","groups":["system:masters"]}`)},
	}},
	{"response-validate.json", &Response{
		Outcome:   Outcome{Status: OutcomePermanent, Message: "spec.field must not be empty", Code: 422},
		Admission: &AdmissionResponse{Allowed: false, Code: 422, Message: "spec.field must not be empty", Warnings: []string{"field is deprecated"}},
	}},
	{"kube-request.json", &KubeRequest{
		Verb: VerbApply, Version: "v1", Resource: "pods", Namespace: "default", Name: "kopf-example-1-child",
		Body:         json.RawMessage(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kopf-example-1-child"}}`),
		FieldManager: "kopfexample", Force: true,
	}},
	{"kube-response-forbidden.json", &KubeResponse{
		Error: &HostError{Code: 403, Reason: "Forbidden", Message: `module "kopfexample" did not declare permission to delete pods; add it to the module's permissions`, Origin: OriginHost},
	}},
	{"request-subhandlers.json", &Request{
		Handler: "create_items", Kind: KindCreate, Reason: ReasonCreate,
		Resource: &ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
		Body:     json.RawMessage(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"fleet","namespace":"default"},"spec":{"items":["a","b"]}}`),
		Name:     "fleet", Namespace: "default",
		New:   json.RawMessage(`{"spec":{"items":["a","b"]}}`),
		Diff:  []DiffItem{{Op: DiffAdd, Field: []string{}, New: json.RawMessage(`{"spec":{"items":["a","b"]}}`)}},
		Retry: 1, Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Runtime: 4.5,
		Subhandlers: []SubhandlerState{
			{ID: "create_items/add-a", Retry: 1, Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Runtime: 4.5, Finished: true},
			{ID: "create_items/add-b", Retry: 1, Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Runtime: 4.5, Sleeping: true},
		},
	}},
	{"response-children.json", &Response{
		Outcome: Outcome{Status: OutcomeChildren},
		Subhandlers: []SubhandlerOutcome{
			{ID: "create_items/add-a", Parent: "create_items", Options: Options{Retries: 5}},
			{ID: "create_items/add-b", Parent: "create_items", Options: Options{Retries: 5},
				Outcome: &Outcome{Status: OutcomeTemporary, Message: "b is not ready yet", Delay: ptr(4.0)}},
			{ID: "create_items/add-c", Parent: "create_items", Options: Options{Retries: 5},
				Outcome: &Outcome{Status: OutcomeSuccess}, Result: json.RawMessage(`{"configMap":"fleet-c"}`)},
		},
	}},
	{"log.json", &LogRecord{Level: LogInfo, Message: "child created", Fields: map[string]any{"child": "kopf-example-1-child"}}},
}

func TestGoldenFixtures(t *testing.T) {
	for _, g := range golden {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join("testdata", g.file)
			want, err := json.MarshalIndent(g.value, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from its Go value; run go test -update if the change is meant:\n got: %s\nwant: %s", path, got, want)
			}
			decoded := reflect.New(reflect.TypeOf(g.value).Elem()).Interface()
			dec := json.NewDecoder(bytes.NewReader(got))
			dec.DisallowUnknownFields()
			if err := dec.Decode(decoded); err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			again, _ := json.MarshalIndent(decoded, "", "  ")
			if !bytes.Equal(append(again, '\n'), got) {
				t.Errorf("%s does not round-trip:\n%s", path, again)
			}
		})
	}
}

func TestGoldenManifestIsValid(t *testing.T) {
	if err := golden[0].value.(*Manifest).Validate(); err != nil {
		t.Fatal(err)
	}
}
