package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// invoke serves the module's requests from --objects (a folder with a
// multi-document file and a List), lists them, and refuses a handler whose
// filters do not match unless --force.
func TestInvokeObjectsAndFilters(t *testing.T) {
	dir := t.TempDir()
	db := writeFile(t, dir, "db.yaml", "apiVersion: demo.kopf.dev/v1\nkind: Database\nmetadata: {name: db1, namespace: default}\nspec: {engine: postgres, replicas: 2}\n")
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, state, "a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: db1, namespace: default}\n---\n# nothing\n")
	writeFile(t, state, "b.json", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db1-db","namespace":"default"},"spec":{"replicas":2}}]}`)
	writeFile(t, state, "notes.txt", "ignored")
	mod := wasmtest.Path(t, "05-database")
	r := run(t.Context(), "", "invoke", mod, "--handler", "reconcile", "--object", db, "--objects", state, "-q")
	if r.code != 0 || !strings.Contains(r.out, "Kubernetes requests:\n  get services default/db1") ||
		!strings.Contains(r.out, "get statefulsets.apps default/db1-db  200  stored") || !strings.Contains(r.out, "spec asks 2") {
		t.Errorf("invoke --objects: %+v", r)
	}
	r = run(t.Context(), "", "invoke", mod, "--handler", "reconcile", "--object", db, "--objects", filepath.Join(dir, "missing"), "-q")
	if r.code != 2 || !strings.Contains(r.errOut, "invoke --objects") {
		t.Errorf("invoke --objects of a missing path: %+v", r)
	}

	filters := wasmtest.Path(t, "03-fields-filters")
	silver := writeFile(t, dir, "silver.yaml", "apiVersion: kopf.dev/v1\nkind: KopfExample\nmetadata: {name: ex, namespace: default, labels: {tier: silver}}\n")
	r = run(t.Context(), "", "invoke", filters, "--handler", "gold", "--object", silver, "-q")
	if r.code != 1 || !strings.Contains(r.errOut, `would not call the handler gold for this object: its labels filter wants tier="gold", the object has tier="silver" (--force calls it anyway)`) {
		t.Errorf("invoke of a filtered handler: %+v", r)
	}
	r = run(t.Context(), "", "invoke", filters, "--handler", "gold", "--object", silver, "--force", "-o", "json")
	var got invocation
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || r.code != 0 || got.Response.Outcome.Status != "success" ||
		!strings.Contains(r.errOut, "called because the call is forced") {
		t.Errorf("invoke --force: %+v (%v)", r, err)
	}
}
