package kube

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestE2EListStreamed: the control plane streams a listing (WatchList is
// on by default in Kubernetes 1.34), and the streamed listing and the list
// decoder both give the objects the dynamic client lists; with
// managedFields dropped (the default), without them.
func TestE2EListStreamed(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-list-streamed")
	for _, name := range []string{"s-1", "s-2", "s-3"} {
		create(t, dyn, kexGVR, kex(ns, name, map[string]string{"app": "a"}))
	}
	want, err := dyn.Resource(kexGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Items) != 3 || len(want.Items[0].GetManagedFields()) == 0 {
		t.Fatalf("the dynamic client lists %d objects (managedFields %v)", len(want.Items), want.Items[0].GetManagedFields())
	}
	keep, err := New(cluster(t).Config, withSettings(func(s *settings.Settings) { s.Kube.KeepManagedFields = true }))
	if err != nil {
		t.Fatal(err)
	}
	opts := metav1.ListOptions{ResourceVersion: "0", Limit: 500}
	ws := watchScope{resource: gvrString(kexGVR), namespace: ns}
	for _, client := range []struct {
		name string
		c    *Client
		want []unstructured.Unstructured
	}{{"managedFields kept", keep, want.Items}, {"managedFields dropped", c, withoutManagedFields(want.Items)}} {
		streamed, err := client.c.streamList(t.Context(), kexGVR, ns, opts, streamHooks{}, ws)
		if err != nil {
			t.Fatalf("%s: the streamed listing: %v", client.name, err)
		}
		listed, err := client.c.listJSON(t.Context(), kexGVR, ns, opts)
		if err != nil {
			t.Fatalf("%s: the list decoder: %v", client.name, err)
		}
		for what, got := range map[string]*unstructured.UnstructuredList{"streamed": streamed, "listed": listed} {
			items := slices.Clone(got.Items)
			slices.SortFunc(items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
			if !reflect.DeepEqual(items, client.want) {
				t.Errorf("%s, %s:\n %v\nwant\n %v", client.name, what, items, client.want)
			}
			if got.GetResourceVersion() == "" {
				t.Errorf("%s, %s: no resourceVersion", client.name, what)
			}
		}
	}
}

func withoutManagedFields(items []unstructured.Unstructured) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, len(items))
	for i := range items {
		out[i] = *items[i].DeepCopy()
		out[i].SetManagedFields(nil)
	}
	return out
}
