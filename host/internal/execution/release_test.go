package execution

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TestDeletionNote: a failing delete handler's report on an object held by
// the finalizer says how to release it (retrying) or that it goes anyway
// (failed for good); other reports say nothing more.
func TestDeletionNote(t *testing.T) {
	const fin = "kopf.zalando.org/KopfFinalizerMarker"
	ref := abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}
	obj := func(deleting bool, finalizers ...string) *Subject {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": "ex", "namespace": "ns"}}}
		u.SetFinalizers(finalizers)
		if deleting {
			u.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-02T03:04:05Z"
		}
		return NewSubject(ref, true, u)
	}
	cases := []struct {
		name     string
		subj     *Subject
		kind     abi.HandlerKind
		finished bool
		want     string
	}{
		{"retrying", obj(true, "other.io/x", fin), abi.KindDelete, false,
			` The finalizer kopf.zalando.org/KopfFinalizerMarker holds the object until the handler succeeds; to let it go without the handler: ` +
				`kubectl patch kopfexamples.kopf.dev ex -n ns --type=json -p '[{"op":"test","path":"/metadata/finalizers/1","value":"kopf.zalando.org/KopfFinalizerMarker"},{"op":"remove","path":"/metadata/finalizers/1"}]'`},
		{"failed for good", obj(true, fin), abi.KindDelete, true, " The deletion goes on without it"},
		{"not deleting", obj(false, fin), abi.KindDelete, false, ""},
		{"no finalizer of ours", obj(true, "other.io/x"), abi.KindDelete, false, ""},
		{"another kind", obj(true, fin), abi.KindResume, false, ""},
	}
	for _, tc := range cases {
		got := deletionNote(tc.subj, tc.kind, fin, tc.finished)
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
