package kube

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// fakeDiscovery mimics a cluster with core pods, metrics pods, apps
// deployments in two versions, a CRD with a status subresource, and two
// groups that both serve "widgets".
func fakeDiscovery() discovered {
	group := func(name, preferred string, versions ...string) *metav1.APIGroup {
		g := &metav1.APIGroup{Name: name, PreferredVersion: metav1.GroupVersionForDiscovery{Version: preferred}}
		for _, v := range versions {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{Version: v})
		}
		return g
	}
	res := func(plural, singular, kind string, namespaced bool, short ...string) metav1.APIResource {
		return metav1.APIResource{Name: plural, SingularName: singular, Kind: kind, Namespaced: namespaced,
			ShortNames: short, Verbs: []string{"get", "list", "watch", "patch"}}
	}
	return discovered{
		groups: []*metav1.APIGroup{
			group("", "v1", "v1"),
			group("metrics.k8s.io", "v1beta1", "v1beta1"),
			group("apps", "v1", "v1", "v1beta2"),
			group("kopf.dev", "v1", "v1"),
			group("a.example", "v1", "v1"),
			group("b.example", "v1", "v1"),
			group("old.example", "v2", "v1", "v2"),
		},
		lists: []*metav1.APIResourceList{
			{GroupVersion: "v1", APIResources: []metav1.APIResource{
				res("pods", "pod", "Pod", true, "po"), {Name: "pods/status", Kind: "Pod"},
				res("configmaps", "", "ConfigMap", true, "cm"),
				res("namespaces", "namespace", "Namespace", false, "ns"),
			}},
			{GroupVersion: "metrics.k8s.io/v1beta1", APIResources: []metav1.APIResource{res("pods", "", "PodMetrics", true)}},
			{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{res("deployments", "deployment", "Deployment", true, "deploy")}},
			{GroupVersion: "apps/v1beta2", APIResources: []metav1.APIResource{
				res("deployments", "deployment", "Deployment", true, "deploy"),
				res("oldthings", "oldthing", "OldThing", true),
			}},
			{GroupVersion: "kopf.dev/v1", APIResources: []metav1.APIResource{
				res("kopfexamples", "kopfexample", "KopfExample", true, "kopfexes", "kex"),
				{Name: "kopfexamples/status", Kind: "KopfExample"},
			}},
			{GroupVersion: "a.example/v1", APIResources: []metav1.APIResource{res("widgets", "widget", "Widget", false)}},
			{GroupVersion: "b.example/v1", APIResources: []metav1.APIResource{res("widgets", "widget", "Widget", true)}},
			{GroupVersion: "old.example/v1", APIResources: []metav1.APIResource{res("gadgets", "gadget", "Gadget", true)}},
		},
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		sel    abi.ResourceSelector
		want   string // Resource.String(), or "" for an error
		status bool
		errIs  error
		errHas string
	}{
		{sel: abi.ResourceSelector{Name: "pods"}, want: "pods.v1", status: true},
		{sel: abi.ResourceSelector{Name: "pod"}, want: "pods.v1", status: true},
		{sel: abi.ResourceSelector{Name: "Pod"}, want: "pods.v1", status: true},
		{sel: abi.ResourceSelector{Name: "po"}, want: "pods.v1", status: true},
		{sel: abi.ResourceSelector{Version: "v1", Name: "pods"}, want: "pods.v1", status: true},
		{sel: abi.ResourceSelector{Name: "pods.v1"}, want: "pods.v1", status: true},
		{sel: abi.ResourceSelector{Group: "metrics.k8s.io", Name: "pods"}, want: "pods.v1beta1.metrics.k8s.io"},
		{sel: abi.ResourceSelector{Name: "pods.v1beta1.metrics.k8s.io"}, want: "pods.v1beta1.metrics.k8s.io"},
		{sel: abi.ResourceSelector{Name: "configmap"}, want: "configmaps.v1"},
		{sel: abi.ResourceSelector{Name: "cm"}, want: "configmaps.v1"},
		{sel: abi.ResourceSelector{Name: "ns"}, want: "namespaces.v1"},
		{sel: abi.ResourceSelector{Name: "deployments"}, want: "deployments.v1.apps"},
		{sel: abi.ResourceSelector{Group: "apps", Version: "v1beta2", Name: "deploy"}, want: "deployments.v1beta2.apps"},
		{sel: abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, want: "kopfexamples.v1.kopf.dev", status: true},
		{sel: abi.ResourceSelector{Name: "kopfexamples.kopf.dev"}, want: "kopfexamples.v1.kopf.dev", status: true},
		{sel: abi.ResourceSelector{Name: "KopfExample"}, want: "kopfexamples.v1.kopf.dev", status: true},
		{sel: abi.ResourceSelector{Name: "kex"}, want: "kopfexamples.v1.kopf.dev", status: true},
		{sel: abi.ResourceSelector{Group: "a.example", Name: "widgets"}, want: "widgets.v1.a.example"},
		{sel: abi.ResourceSelector{Name: "widgets"}, errIs: ErrAmbiguous, errHas: "widgets.v1.a.example, widgets.v1.b.example"},
		{sel: abi.ResourceSelector{Name: "nothings"}, errIs: ErrNotServed},
		{sel: abi.ResourceSelector{Group: "kopf.dev", Name: "pods"}, errIs: ErrNotServed},
		{sel: abi.ResourceSelector{Group: "kopf.dev", Version: "v2", Name: "kopfexamples"}, errIs: ErrNotServed},
		{sel: abi.ResourceSelector{Name: "gadgets"}, errIs: ErrNotServed, errHas: "gadgets.v1.old.example; name the version"},
		{sel: abi.ResourceSelector{Version: "v1", Name: "gadgets"}, want: "gadgets.v1.old.example"},
	}
	d := fakeDiscovery()
	for _, tt := range tests {
		t.Run(selString(tt.sel), func(t *testing.T) {
			got, err := d.resolve(tt.sel)
			if tt.errIs != nil {
				if !errors.Is(err, tt.errIs) || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("resolve(%+v) = %v, %v; want an error %v containing %q", tt.sel, got, err, tt.errIs, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(%+v): %v", tt.sel, err)
			}
			if got.String() != tt.want || got.Status != tt.status {
				t.Errorf("resolve(%+v) = %s (status %v); want %s (status %v)", tt.sel, got, got.Status, tt.want, tt.status)
			}
		})
	}
}

func TestResolveDetails(t *testing.T) {
	got, err := fakeDiscovery().resolve(abi.ResourceSelector{Name: "kopfexamples"})
	if err != nil {
		t.Fatal(err)
	}
	want := abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	if got.ResourceRef != want || got.Singular != "kopfexample" || len(got.ShortNames) != 2 {
		t.Errorf("resolve = %+v; want %+v", got, want)
	}
	ns, _ := fakeDiscovery().resolve(abi.ResourceSelector{Name: "namespaces"})
	if ns.Namespaced {
		t.Errorf("namespaces resolved as namespaced")
	}
}

func TestLookup(t *testing.T) {
	d := fakeDiscovery()
	r, ok := d.lookup(Resource{ResourceRef: abi.ResourceRef{Version: "v1", Plural: "pods"}}.GVR())
	if !ok || r.Kind != "Pod" || !r.Status {
		t.Errorf("lookup(pods.v1) = %+v, %v", r, ok)
	}
	if _, ok := d.lookup(Resource{ResourceRef: abi.ResourceRef{Group: "apps", Version: "v2", Plural: "deployments"}}.GVR()); ok {
		t.Errorf("lookup(deployments.v2.apps) found something")
	}
}
