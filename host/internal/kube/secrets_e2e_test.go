package kube

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// UpdateSecret sets the data it is given and nothing else: the labels,
// annotations, owners and other data keys that deploy tools put on the
// Secret stay; a stale resourceVersion is ErrConflict, a deleted Secret
// ErrGone.
func TestE2ESecrets(t *testing.T) {
	c, dyn := newClient(t)
	ctx := t.Context()
	ns := namespace(t, dyn, "secrets")
	defer dropNamespace(t, dyn, ns)

	owner, err := dyn.Resource(cmGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "owner"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	placeholder := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"data": map[string]any{"other": "a2VlcA=="}, // "keep"
		"metadata": map[string]any{"name": "cert",
			"labels":      map[string]any{"app.kubernetes.io/managed-by": "Helm"},
			"annotations": map[string]any{"meta.helm.sh/release-name": "ops"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"name": "owner", "uid": string(owner.GetUID())}},
		},
	}}
	if _, err := dyn.Resource(secrets).Namespace(ns).Create(ctx, placeholder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	read, err := c.GetSecret(ctx, ns, "cert")
	if err != nil {
		t.Fatal(err)
	}
	updated, err := c.UpdateSecret(ctx, ns, "cert", Secret{Type: "kubernetes.io/tls", ResourceVersion: read.ResourceVersion,
		Data: map[string][]byte{"tls.crt": []byte("crt"), "tls.key": []byte("key")}})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Type != "Opaque" || string(updated.Data["tls.crt"]) != "crt" || string(updated.Data["other"]) != "keep" {
		t.Errorf("updated: type %q, data %q", updated.Type, updated.Data)
	}
	obj, err := dyn.Resource(secrets).Namespace(ns).Get(ctx, "cert", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" || obj.GetAnnotations()["meta.helm.sh/release-name"] != "ops" ||
		len(obj.GetOwnerReferences()) != 1 {
		t.Errorf("the update dropped metadata: labels %v, annotations %v, owners %v", obj.GetLabels(), obj.GetAnnotations(), obj.GetOwnerReferences())
	}

	if _, err := c.UpdateSecret(ctx, ns, "cert", Secret{ResourceVersion: read.ResourceVersion,
		Data: map[string][]byte{"tls.crt": []byte("stale")}}); !errors.Is(err, ErrConflict) {
		t.Errorf("an update at a stale resourceVersion: %v; want ErrConflict", err)
	}
	if got, _ := c.GetSecret(ctx, ns, "cert"); got == nil || string(got.Data["tls.crt"]) != "crt" {
		t.Error("an update at a stale resourceVersion was applied")
	}
	if _, err := c.UpdateSecret(ctx, ns, "gone", Secret{ResourceVersion: read.ResourceVersion,
		Data: map[string][]byte{"tls.crt": []byte("x")}}); !errors.Is(err, ErrGone) {
		t.Errorf("an update of a missing Secret: %v; want ErrGone", err)
	}
}
