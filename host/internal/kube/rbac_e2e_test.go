package kube

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Without permission to list namespaces, a watch with patterns serves the
// patterns that are plain names, as Kopf falls back.
func TestE2EWatchWithoutNamespacePermission(t *testing.T) {
	_, dyn := newClient(t)
	ns := namespace(t, dyn, "fallback-a")
	namespace(t, dyn, "fallback-b")
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "kex-reader", "namespace": ns},
		"rules": []any{map[string]any{
			"apiGroups": []any{"kopf.dev"}, "resources": []any{"kopfexamples"}, "verbs": []any{"get", "list", "watch"},
		}},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "kex-reader", "namespace": ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kex-reader"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "limited"}},
	}}
	rbac := func(plural string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: plural}
	}
	for gvr, obj := range map[schema.GroupVersionResource]*unstructured.Unstructured{rbac("roles"): role, rbac("rolebindings"): binding} {
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(t, dyn, kexGVR, kex(ns, "visible", nil))

	admin, _ := newClient(t)
	res := resolve(t, admin, "kopfexamples")
	cfg := rest.CopyConfig(cluster(t).Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "limited"}
	limited, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope, _ := ParseNamespaces("fallback-a", "fallback-*,!fallback-c")
	rec := newRecorder()
	w, err := limited.Watch(t.Context(), res, scope, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := w.Namespaces(); !slices.Equal(got, []string{ns}) {
		t.Errorf("Namespaces() = %q; want only the plain name %s", got, ns)
	}
	if ev := rec.next(t, "visible"); !ev.Initial {
		t.Errorf("visible: not from the initial listing")
	}
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
}
