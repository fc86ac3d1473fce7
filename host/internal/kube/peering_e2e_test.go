package kube

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// TestPeeringResourceAndPatch finds Kopf's peering resources: none before
// the CRDs exist, then the legacy zalando.org/v1 ones (the only ones
// installed here: kopf.dev/v1 wins when both are), and writes and removes
// a peer record.
func TestPeeringResourceAndPatch(t *testing.T) {
	env := cluster(t)
	c, dyn := newClient(t)
	ctx := context.Background()
	if _, err := c.PeeringResource(ctx, true); !errors.Is(err, ErrNotServed) {
		t.Fatalf("PeeringResource without the CRDs: %v, want ErrNotServed", err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.InstallCRDs(filepath.Join(root, "deploy", "peering", "crds-zalando.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, clusterwide := range []bool{true, false} {
		res, err := c.PeeringResource(ctx, clusterwide)
		if err != nil {
			t.Fatal(err)
		}
		if res.Group != "zalando.org" || res.Version != "v1" || res.Namespaced == clusterwide {
			t.Errorf("clusterwide %v: %+v", clusterwide, res.ResourceRef)
		}
	}
	res, _ := c.PeeringResource(ctx, false)
	ns := namespace(t, dyn, "peering")
	ri := dyn.Resource(schema.GroupVersionResource{Group: "zalando.org", Version: "v1", Resource: "kopfpeerings"}).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "zalando.org/v1", "kind": "KopfPeering",
		"metadata": map[string]any{"name": "default"}}}
	if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"priority": 5, "lifetime": 60, "lastseen": "2026-01-02T03:04:05.000000+00:00"}
	if err := c.PatchPeering(ctx, res, ns, "default", map[string]any{"a@b": rec, "other": rec}); err != nil {
		t.Fatal(err)
	}
	if err := c.PatchPeering(ctx, res, ns, "default", map[string]any{"other": nil}); err != nil {
		t.Fatal(err)
	}
	got, err := ri.Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(got.Object, "status")
	if len(status) != 1 || status["a@b"] == nil {
		t.Errorf("status %v, want only a@b", status)
	}
	if err := c.PatchPeering(ctx, res, ns, "missing", map[string]any{"a@b": nil}); !errors.Is(err, ErrGone) {
		t.Errorf("patch of a missing peering: %v, want ErrGone", err)
	}
}
