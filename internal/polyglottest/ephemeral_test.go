package polyglottest

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

var (
	evcs           = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "ephemeralvolumeclaims"}
	pvcs           = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvs            = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	storageClasses = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}
)

// TestEphemeralVolumeClaim: Kopf's tutorial operator, as the walkthrough
// of Kopf's docs ends it (examples/python/ephemeral: the handlers are
// Kopf's text; the Kubernetes client is kopf-wasm's shim), runs on the
// real control plane: an EphemeralVolumeClaim gets a PVC from the
// template file, adopted, whose name is the create handler's result; a
// new size is patched into the bound PVC by the update handler, new labels
// by the field handler (the walkthrough's old/new version); an EVC without a size fails permanently with
// Kopf's message; and the garbage collector deletes the PVC with its EVC.
func TestEphemeralVolumeClaim(t *testing.T) {
	ns := "evc-python"
	logs := operator(t, ns, guestwasm.Path(t, guestwasm.Python, "ephemeral"))
	// The walkthrough's PVC names the storage class "standard"; with it
	// expandable and a volume to bind to, the PVC can be resized.
	createOnce(t, storageClasses, map[string]any{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata": map[string]any{"name": "standard"}, "provisioner": "kubernetes.io/no-provisioner",
		"allowVolumeExpansion": true, "volumeBindingMode": "Immediate"})
	create(t, pvs, "", map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": map[string]any{"name": "evc-python-pv"},
		"spec": map[string]any{"capacity": map[string]any{"storage": "5G"}, "accessModes": []any{"ReadWriteOnce"},
			"storageClassName": "standard", "hostPath": map[string]any{"path": "/tmp/evc-python-pv"},
			"claimRef": map[string]any{"namespace": ns, "name": "my-claim"}}})
	t.Cleanup(func() { remove(t, pvs, "", "evc-python-pv") })

	create(t, evcs, ns, map[string]any{"apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim",
		"metadata": map[string]any{"name": "my-claim", "labels": map[string]any{"app": "one"}},
		"spec":     map[string]any{"size": "1G"}})
	e2etest.Eventually(t, 30*time.Second, "create", hasValue(t, evcs, ns, "my-claim", "my-claim", "status", "create_fn", "pvc-name"))
	e2etest.Eventually(t, 10*time.Second, "create log", logged(logs, "PVC child is created", "handler=create_fn"))
	evc, pvc := get(t, evcs, ns, "my-claim"), get(t, pvcs, ns, "my-claim")
	if pvc == nil {
		t.Fatal("the PVC my-claim does not exist")
	}
	refs := pvc.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != evc.GetUID() || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("ownerReferences %+v; want the EVC as the controller", refs)
	}
	if size, _, _ := unstructured.NestedString(pvc.Object, "spec", "resources", "requests", "storage"); size != "1G" {
		t.Errorf("the PVC requests %q, want the template filled with 1G", size)
	}
	if pvc.GetLabels()["app"] != "one" {
		t.Errorf("the PVC's labels %v; want the EVC's (kopf.adopt)", pvc.GetLabels())
	}

	e2etest.Eventually(t, time.Minute, "bound", hasValue(t, pvcs, ns, "my-claim", "Bound", "status", "phase"))
	// The creation ends when relabel, too, has succeeded (its first try
	// finds no status.create_fn yet); a change before that is folded into
	// the creation's diff-base, as in Kopf, and no update follows.
	e2etest.Eventually(t, 30*time.Second, "created", logged(logs, "Creation is processed: 2 succeeded"))
	mergePatch(t, evcs, ns, "my-claim", `{"spec":{"size":"2G"}}`)
	e2etest.Eventually(t, 30*time.Second, "resized", hasValue(t, pvcs, ns, "my-claim", "2G", "spec", "resources", "requests", "storage"))
	e2etest.Eventually(t, 10*time.Second, "update log", logged(logs, "PVC child is updated", "handler=update_fn"))

	// The walkthrough's old/new relabelling merges the EVC's labels into
	// the PVC's (a removed label stays: the walkthrough says why).
	mergePatch(t, evcs, ns, "my-claim", `{"metadata":{"labels":{"app":"two","tier":"three"}}}`)
	e2etest.Eventually(t, 30*time.Second, "relabelled", func() error {
		if labels := get(t, pvcs, ns, "my-claim").GetLabels(); labels["app"] != "two" || labels["tier"] != "three" {
			return fmt.Errorf("the PVC's labels are %v, want app=two and tier=three", labels)
		}
		return nil
	})

	create(t, evcs, ns, map[string]any{"apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim",
		"metadata": map[string]any{"name": "no-size"}, "spec": map[string]any{}})
	e2etest.Eventually(t, 30*time.Second, "permanent failure", logged(logs, "Size must be set. Got None."))

	remove(t, evcs, ns, "my-claim")
	e2etest.Eventually(t, 30*time.Second, "EVC deleted", gone(t, evcs, ns, "my-claim"))
	e2etest.Eventually(t, time.Minute, "PVC collected", func() error {
		if pvc := get(t, pvcs, ns, "my-claim"); pvc != nil && pvc.GetDeletionTimestamp() == nil {
			return fmt.Errorf("the PVC is not being deleted")
		}
		return nil
	})
}

// createOnce creates a cluster-scoped object unless one of its name
// exists.
func createOnce(t *testing.T, res schema.GroupVersionResource, obj map[string]any) {
	t.Helper()
	name := obj["metadata"].(map[string]any)["name"].(string)
	if get(t, res, "", name) == nil {
		create(t, res, "", obj)
	}
}
