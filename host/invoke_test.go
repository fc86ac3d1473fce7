package host

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestInvokeFilters: invoke applies the handler's filters as the operator
// does and says why it would not call a handler; Force calls it anyway.
func TestInvokeFilters(t *testing.T) {
	mod := wasmtest.Path(t, "03-fields-filters")
	obj := func(name, labels string) []byte {
		return []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"` + name +
			`","namespace":"default","labels":{` + labels + `}},"spec":{"size":"small"}}`)
	}
	old := []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"ex","namespace":"default"},"spec":{"size":"small"}}`)
	tests := []struct {
		name, handler string
		object, old   []byte
		want          string // "" when called
	}{
		{"labels match", "gold", obj("ex", `"tier":"gold"`), nil, ""},
		{"label differs", "gold", obj("ex", `"tier":"silver"`), nil, `its labels filter wants tier="gold", the object has tier="silver"`},
		{"label missing", "teamed", obj("ex", ``), nil, "its labels filter wants team present, the object has none"},
		{"when false (long name)", "named", obj("long-name", ``), nil, "its when filter returned false"},
		{"field unchanged", "resized/spec.size", obj("ex", ``), old, "its field spec.size did not change"},
		{"new value filter", "large/spec.size", obj("ex", ``), nil, `the new value of spec.size does not match the new filter "large"`},
	}
	for _, tt := range tests {
		_, resp, err := Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: tt.handler, Object: tt.object, Old: tt.old})
		switch {
		case tt.want == "" && (err != nil || resp.Outcome.Status != abi.OutcomeSuccess):
			t.Errorf("%s: %v, %+v", tt.name, err, resp)
		case tt.want != "" && (!errors.Is(err, ErrNotCalled) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want ErrNotCalled saying %q", tt.name, err, tt.want)
		case tt.name == "label differs": // one forced call
			_, resp, err := Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: tt.handler, Object: tt.object, Old: tt.old, Force: true})
			if err != nil || resp.Outcome.Status != abi.OutcomeSuccess {
				t.Errorf("%s, forced: %v, %+v", tt.name, err, resp)
			}
		}
	}
}

// TestInvokeStoredObjects: the module's Kubernetes requests are served
// from the stored objects; writes change them in memory and are reported.
func TestInvokeStoredObjects(t *testing.T) {
	mod := wasmtest.Path(t, "05-database")
	db := []byte(`{"apiVersion":"demo.kopf.dev/v1","kind":"Database","metadata":{"name":"db1","namespace":"default"},"spec":{"engine":"postgres","replicas":2}}`)
	service := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "db1", "namespace": "default"}}
	sts := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db1-db", "namespace": "default"},
		"spec": map[string]any{"replicas": 2.0}}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{service, sts}}

	var calls []KubeCall
	_, resp, err := Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: "reconcile", Object: db,
		Objects: []map[string]any{list}, KubeCalls: func(c KubeCall) { calls = append(calls, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome.Status != abi.OutcomeSuccess || !strings.Contains(string(resp.Patch.Merge), `"status":"True","type":"Scaled"`) {
		t.Errorf("outcome %+v, patch %s", resp.Outcome, resp.Patch.Merge)
	}
	if got := describeCalls(calls); got != "get services default/db1 200 stored; get statefulsets.apps default/db1-db 200 stored" {
		t.Errorf("calls: %s", got)
	}

	calls = nil
	_, resp, err = Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: "reconcile", Object: db,
		Objects: []map[string]any{sts}, KubeCalls: func(c KubeCall) { calls = append(calls, c) }})
	if err != nil {
		t.Fatal(err)
	}
	want := "get services default/db1 404 stored; create services default 200 stored; get statefulsets.apps default/db1-db 200 stored"
	if got := describeCalls(calls); got != want || resp.Outcome.Status != abi.OutcomeSuccess ||
		!strings.Contains(string(resp.Patch.Merge), `"reason":"Recreated"`) {
		t.Errorf("calls: %s\nwant   %s\noutcome %+v, patch %s", got, want, resp.Outcome, resp.Patch.Merge)
	}

	_, _, err = Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: "reconcile", Object: db,
		Objects: []map[string]any{{"kind": "Service"}}})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "needs apiVersion, kind and metadata.name") {
		t.Errorf("a stored object without a name: %v", err)
	}
}

func describeCalls(calls []KubeCall) string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Call()+" "+strconv.Itoa(c.Code)+" "+c.Source)
	}
	return strings.Join(out, "; ")
}
