package kopftest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

func example(size int) map[string]any {
	return map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "ex", "namespace": "default", "uid": "u1", "labels": map[string]any{"app": "demo"}},
		"spec":     map[string]any{"size": size, "other": "same"},
		"status":   map[string]any{"ignored": true},
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFieldHandlerSeesTheField(t *testing.T) {
	h := kopftest.New(t)
	tests := []struct {
		name string
		old  map[string]any
		want string
	}{
		{"update", example(1), `{"diff":[{"field":[],"new":2,"old":1,"op":"change"}],"new":2,"old":1,"reason":"update"}`},
		{"create", nil, `{"diff":[{"field":[],"new":2,"old":null,"op":"add"}],"new":2,"old":null,"reason":"create"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.Run("sizeFn/spec.size", example(2), tt.old)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := asJSON(t, res.Value); got != tt.want {
				t.Errorf("result = %s\nwant     %s", got, tt.want)
			}
		})
	}
}

func TestRequestForUpdates(t *testing.T) {
	h := kopftest.New(t)
	req := h.Request("siblings", example(2), example(1))
	if req.Reason != abi.ReasonUpdate || string(req.Old) != `{"metadata":{"labels":{"app":"demo"}},"spec":{"other":"same","size":1}}` ||
		asJSON(t, req.Diff) != `[{"op":"change","field":["spec","size"],"old":1,"new":2}]` {
		t.Errorf("request = reason %s, old %s, diff %s", req.Reason, req.Old, asJSON(t, req.Diff))
	}
	if req.Resource == nil || *req.Resource != (abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}) {
		t.Errorf("resource = %+v", req.Resource)
	}
}

func TestObjectStore(t *testing.T) {
	h := kopftest.New(t)
	h.Add("", "configmaps", map[string]any{"metadata": map[string]any{"name": "other", "namespace": "default", "labels": map[string]any{"app": "demo"}}})
	res := h.Run("configmaps", example(1), nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := `{"applied":"applied","data":{"k":"2","x":"y"},"listed":2,"name":"ex-00002","owner":"default"}`
	if got := asJSON(t, res.Value); got != want {
		t.Errorf("result = %s\nwant     %s", got, want)
	}
	stored, ok := h.Object("", "configmaps", "default", "ex-00002")
	if !ok || asJSON(t, stored["metadata"].(map[string]any)["ownerReferences"]) !=
		`[{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":true,"controller":true,"kind":"KopfExample","name":"ex","uid":"u1"}]` {
		t.Errorf("stored child = %v", stored)
	}
	var verbs []string
	for _, r := range h.KubeRequests() {
		verbs = append(verbs, string(r.Verb))
	}
	if got := strings.Join(verbs, " "); got != "create create patch update apply list delete get get" {
		t.Errorf("verbs = %s", got)
	}
}

func TestUndeclaredRequestIsRefused(t *testing.T) {
	h := kopftest.New(t)
	res := h.Run("deletePod", example(1), nil)
	var apiErr *kopf.APIError
	if res.Err == nil || !strings.Contains(res.Err.Error(), `module "suite" did not declare permission to delete pods`) {
		t.Fatalf("outcome = %v", res.Err)
	}
	if errors.As(res.Err, &apiErr) {
		t.Error("the outcome kept a Go error type across the ABI")
	}
	if _, ok := h.Object("", "pods", "default", "p"); ok {
		t.Error("the refused request reached the store")
	}
}

func TestKubeFunc(t *testing.T) {
	h := kopftest.New(t)
	h.Kube = func(req abi.KubeRequest) abi.KubeResponse {
		return abi.KubeResponse{Error: &abi.HostError{Code: 500, Message: "etcd is down", Origin: abi.OriginCluster}}
	}
	res := h.Run("configmaps", example(1), nil)
	var arbitrary *kopftest.ArbitraryError
	if !errors.As(res.Err, &arbitrary) || !strings.Contains(arbitrary.Message, "etcd is down") {
		t.Errorf("outcome = %v", res.Err)
	}
}

func TestMemoIsKeptBetweenCalls(t *testing.T) {
	h := kopftest.New(t)
	for want := 1.0; want <= 3; want++ {
		if res := h.Run("countCalls", example(1), nil); res.Value != want {
			t.Fatalf("call %v counted %v", want, res.Value)
		}
	}
}

func TestDaemonStops(t *testing.T) {
	for _, after := range []int{0, 3} {
		h := kopftest.New(t)
		h.StopAfter = after
		h.StopReason = "deleted"
		res := h.Run("monitor", example(1), nil)
		if got := asJSON(t, res.Value); got != asJSON(t, map[string]any{"rounds": after + 1, "reason": "deleted"}) {
			t.Errorf("StopAfter %d: result %s", after, got)
		}
		if len(h.Sleeps()) != after+1 || h.Sleeps()[0] != 10 {
			t.Errorf("StopAfter %d: sleeps %v", after, h.Sleeps())
		}
	}
}

func TestWebhook(t *testing.T) {
	h := kopftest.New(t)
	res := h.Run("check", example(1), nil)
	if !res.Allowed() || asJSON(t, res.Response.Admission.Warnings) != `["checked CREATE"]` {
		t.Errorf("create verdict = %+v", res.Response.Admission)
	}
	res = h.Run("check", example(2), example(1))
	if res.Allowed() || res.Response.Admission.Code != 403 || res.Err != (kopf.AdmissionError{Message: "immutable", Code: 403}) {
		t.Errorf("update verdict = %+v, outcome %v", res.Response.Admission, res.Err)
	}
}

func TestEventType(t *testing.T) {
	h := kopftest.New(t)
	if res := h.Run("watch", example(1), nil); res.Value != "ADDED" {
		t.Errorf("type = %v", res.Value)
	}
	if res := h.Run("watch", example(2), example(1)); res.Value != "MODIFIED" {
		t.Errorf("type = %v", res.Value)
	}
}

func TestIndicesAndWhen(t *testing.T) {
	h := kopftest.New(t)
	if res := h.Run("byNamespace", example(1), nil); asJSON(t, res.Value) != `{"default":"ex"}` {
		t.Errorf("index value = %v", res.Value)
	}
	h.SetIndex("byNamespace", "default", "ex", "ex2")
	res := h.Run("siblings", example(2), example(1))
	if got := asJSON(t, res.Value); got != `{"index":{"default":["ex","ex2"]},"lookup":["ex","ex2"]}` {
		t.Errorf("siblings = %s (%v)", got, res.Err)
	}
	unlabelled := example(1)
	delete(unlabelled["metadata"].(map[string]any), "labels")
	if !h.Match("siblings", example(1), nil) || h.Match("siblings", unlabelled, nil) {
		t.Error("the when filter does not follow the label")
	}
}

func TestActivityAndTemporaryErrors(t *testing.T) {
	h := kopftest.New(t)
	if res := h.Run("startup", nil, nil); res.Value != "startup" {
		t.Errorf("activity = %v", res.Value)
	}
	req := h.Request("startup", nil, nil)
	req.Handler = "missing"
	res, err := h.Call(req)
	if err != nil || res.Err == nil || !strings.Contains(res.Err.Error(), `no handler "missing"`) {
		t.Errorf("missing handler: %v, %v", res, err)
	}
	res = h.Run("flaky", example(1), nil)
	if res.Err != (kopf.TemporaryError{Message: "not yet", Delay: 2500 * time.Millisecond}) || asJSON(t, res.Merge()) != `{"status":{"tries":1}}` || res.Value != nil {
		t.Errorf("flaky: outcome %#v, merge %v", res.Err, res.Merge())
	}
}

func TestConcurrentCalls(t *testing.T) {
	h := kopftest.New(t)
	const workers, calls = 8, 25
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			obj := example(w)
			obj["metadata"].(map[string]any)["name"] = "ex-" + strings.Repeat("x", w)
			for i := 1; i <= calls; i++ {
				res, err := h.Call(h.Request("countCalls", obj, nil))
				if err == nil && res.Value != float64(i) {
					err = errors.New("memo mixed up between objects")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.Calls()); n != 0 {
		t.Errorf("host calls = %d, want none", n)
	}
}
