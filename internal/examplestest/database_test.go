package examplestest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

var (
	databases    = gvr("demo.kopf.dev", "v1", "databases")
	statefulsets = gvr("apps", "v1", "statefulsets")
	services     = gvr("", "v1", "services")
	claims       = gvr("", "v1", "persistentvolumeclaims")
	cronjobs     = gvr("batch", "v1", "cronjobs")
)

// TestDatabase: the children exist and are owned by the Database; scaling,
// toggling backups and deleting the Service are followed; the conditions
// say so; deleting the Database makes the garbage collector delete the
// children. No Pod runs (no StatefulSet controller, no kubelet): the test
// looks at the objects only.
func TestDatabase(t *testing.T) {
	const ns = "ex-database"
	logs := operator(t, ns, "05-database")
	createObject(t, databases, ns, map[string]any{"apiVersion": "demo.kopf.dev/v1", "kind": "Database",
		"metadata": map[string]any{"name": "orders"},
		"spec":     map[string]any{"engine": "postgresql", "version": "16", "storage": "1Gi", "replicas": 2, "backupEnabled": true}})

	e2etest.Eventually(t, 30*time.Second, "provisioning", hasString(t, databases, ns, "orders", "Provisioning", "status", "state"))
	db := get(t, databases, ns, "orders")
	owner := []any{map[string]any{"apiVersion": "demo.kopf.dev/v1", "kind": "Database", "name": "orders",
		"uid": string(db.GetUID()), "controller": true, "blockOwnerDeletion": true}}
	owned := func(res string, name string) {
		t.Helper()
		obj := get(t, gvr(map[string]string{"statefulsets": "apps", "cronjobs": "batch"}[res],
			"v1", res), ns, name)
		if obj == nil {
			t.Fatalf("%s %s does not exist", res, name)
		}
		if refs := obj.Object["metadata"].(map[string]any)["ownerReferences"]; !reflect.DeepEqual(refs, owner) {
			t.Errorf("%s %s: ownerReferences %v; want %v", res, name, refs, owner)
		}
	}
	owned("statefulsets", "orders-db")
	owned("services", "orders")
	owned("persistentvolumeclaims", "orders-data")
	e2etest.Eventually(t, 30*time.Second, "backup cronjob", hasString(t, cronjobs, ns, "orders-backup", "0 2 * * *", "spec", "schedule"))
	owned("cronjobs", "orders-backup")
	if err := hasString(t, statefulsets, ns, "orders-db", "2", "spec", "replicas")(); err != nil {
		t.Error(err)
	}
	sts := get(t, statefulsets, ns, "orders-db")
	containers, _ := sts.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	if len(containers) != 1 || containers[0].(map[string]any)["image"] != "postgres:16" {
		t.Errorf("statefulset containers %v; want one with image postgres:16", containers)
	}
	if err := hasString(t, claims, ns, "orders-data", "1Gi", "spec", "resources", "requests", "storage")(); err != nil {
		t.Error(err)
	}

	// Update: scale.
	mergePatch(t, databases, ns, "orders", `{"spec":{"replicas":3}}`)
	e2etest.Eventually(t, 30*time.Second, "scaled", hasString(t, statefulsets, ns, "orders-db", "3", "spec", "replicas"))
	e2etest.Eventually(t, 30*time.Second, "status.replicas", hasString(t, databases, ns, "orders", "3", "status", "replicas"))

	// Field: backups off.
	mergePatch(t, databases, ns, "orders", `{"spec":{"backupEnabled":false}}`)
	e2etest.Eventually(t, 30*time.Second, "cronjob deleted", func() error {
		if get(t, cronjobs, ns, "orders-backup") != nil {
			return fmt.Errorf("orders-backup still exists")
		}
		return nil
	})

	// Timer: drift.
	if err := dyn.Resource(services).Namespace(ns).Delete(context.Background(), "orders", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 30*time.Second, "service recreated", func() error {
		if get(t, services, ns, "orders") == nil {
			return fmt.Errorf("no service orders")
		}
		return nil
	})
	owned("services", "orders")
	e2etest.Eventually(t, 30*time.Second, "conditions", func() error {
		conds, _ := get(t, databases, ns, "orders").Object["status"].(map[string]any)["conditions"].([]any)
		// Recreated on the tick that repaired it, Present after.
		want := []any{
			map[string]any{"type": "ServiceReady", "status": "True", "reason": "Present", "message": "service orders"},
			map[string]any{"type": "Scaled", "status": "True", "reason": "Replicas", "message": "statefulset has 3 replicas, spec asks 3"},
		}
		if len(conds) == 2 && conds[0].(map[string]any)["reason"] == "Recreated" {
			want[0].(map[string]any)["reason"] = "Recreated"
		}
		if !reflect.DeepEqual(conds, want) {
			return fmt.Errorf("conditions %v", conds)
		}
		return nil
	})
	e2etest.Eventually(t, 5*time.Second, "logs", logged(logs, "database provisioning started", "msg=scaled",
		"backups enabled", "backups disabled", "service was missing: recreated"))

	// Delete: the garbage collector deletes the children (the PVC once
	// pvc-protection has released it: no Pod uses it).
	begin := time.Now()
	deleteObject(t, databases, ns, "orders")
	e2etest.Eventually(t, time.Minute, "children collected", goneAll(t, ns,
		child{statefulsets, "orders-db"}, child{services, "orders"}, child{claims, "orders-data"}))
	t.Logf("the garbage collector deleted the children %v after the Database's deletion", time.Since(begin).Round(time.Millisecond))
}
