package kube

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// scanDiscovery is fakeDiscovery with categories, Events in both groups and
// a resource that cannot be watched.
func scanDiscovery() discovered {
	d := fakeDiscovery()
	for _, l := range d.lists {
		for i := range l.APIResources {
			r := &l.APIResources[i]
			switch r.Name {
			case "pods", "deployments", "kopfexamples":
				r.Categories = []string{"all"}
			}
		}
	}
	verbs := []string{"get", "list", "watch"}
	d.lists[0].APIResources = append(d.lists[0].APIResources,
		metav1.APIResource{Name: "events", Kind: "Event", Namespaced: true, Verbs: verbs, Categories: []string{"all"}},
		metav1.APIResource{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}, Categories: []string{"all"}})
	d.groups = append(d.groups, &metav1.APIGroup{Name: "events.k8s.io", PreferredVersion: metav1.GroupVersionForDiscovery{Version: "v1"}})
	d.lists = append(d.lists, &metav1.APIResourceList{GroupVersion: "events.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "events", Kind: "Event", Namespaced: true, Verbs: verbs}}})
	return d
}

func TestResolveMany(t *testing.T) {
	tests := []struct {
		name string
		sel  abi.ResourceSelector
		want string // resource names, space-separated, sorted
	}{
		{"category all, preferred versions", abi.ResourceSelector{Category: "all"},
			"deployments.v1.apps kopfexamples.v1.kopf.dev pods.v1 pods.v1beta1.metrics.k8s.io"},
		{"category in a group", abi.ResourceSelector{Group: "apps", Category: "all"}, "deployments.v1.apps"},
		{"category in an explicit version", abi.ResourceSelector{Group: "apps", Version: "v1beta2", Category: "all"}, "deployments.v1beta2.apps"},
		{"unknown category", abi.ResourceSelector{Category: "none"}, ""},
		// old.example's preferred version v2 has no resources; v1 has.
		{"everything in a group: preferred version only", abi.ResourceSelector{Group: "old.example", Everything: true}, ""},
		{"everything in a group version", abi.ResourceSelector{Group: "old.example", Version: "v1", Everything: true}, "gadgets.v1.old.example"},
		{"a callable selector's candidates in a group: every version", abi.ResourceSelector{Group: "apps", Callback: true},
			"deployments.v1.apps deployments.v1beta2.apps oldthings.v1beta2.apps"},
		{"a callable selector's candidates in a group without preferred resources", abi.ResourceSelector{Group: "old.example", Callback: true},
			"gadgets.v1.old.example"},
		{"everything in version v1 of any group", abi.ResourceSelector{Version: "v1", Everything: true},
			"configmaps.v1 deployments.v1.apps gadgets.v1.old.example kopfexamples.v1.kopf.dev namespaces.v1 pods.v1 widgets.v1.a.example widgets.v1.b.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, r := range scanDiscovery().resolveMany(tt.sel) {
				names = append(names, r.String())
			}
			if got := strings.Join(names, " "); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Events (core and events.k8s.io) and resources that cannot be listed
// and watched are never selected by everything.
func TestResolveManyEverythingSkips(t *testing.T) {
	for _, r := range scanDiscovery().resolveMany(abi.ResourceSelector{Everything: true}) {
		if r.Plural == "events" || r.Plural == "bindings" {
			t.Errorf("everything selected %s", r)
		}
	}
}

// A callable selector's candidates say which are preferred and carry their
// categories, as Kopf's kopf.Resource does.
func TestResolveManyCandidates(t *testing.T) {
	var got []string
	for _, r := range scanDiscovery().resolveMany(abi.ResourceSelector{Group: "apps", Callback: true}) {
		got = append(got, fmt.Sprintf("%s preferred=%v categories=%v", r, r.Preferred, r.Categories))
	}
	want := "[deployments.v1.apps preferred=true categories=[all] deployments.v1beta2.apps preferred=false categories=[all] " +
		"oldthings.v1beta2.apps preferred=false categories=[]]"
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
}
