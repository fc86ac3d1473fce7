package kube

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// do runs a guest request and fails the test when the outcome is not the
// expected HTTP code (0 for success); it returns the decoded body.
func do(t *testing.T, c *Client, req abi.KubeRequest, wantCode int) map[string]any {
	t.Helper()
	resp := c.Do(t.Context(), req)
	if wantCode == 0 {
		if resp.Error != nil {
			t.Fatalf("%s %s %s: %+v", req.Verb, req.Resource, req.Name, resp.Error)
		}
	} else {
		if resp.Error == nil || resp.Error.Code != wantCode {
			t.Fatalf("%s %s %s: %+v; want code %d", req.Verb, req.Resource, req.Name, resp.Error, wantCode)
		}
		return nil
	}
	if len(resp.Body) == 0 {
		return nil
	}
	var body map[string]any
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func cmBody(name string, data map[string]string, labels map[string]string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": labels}, "data": data,
	})
	return b
}

func dataOf(body map[string]any) map[string]any {
	d, _ := body["data"].(map[string]any)
	return d
}

func TestE2EDo(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-do")
	cm := abi.KubeRequest{Version: "v1", Resource: "configmaps", Namespace: ns}
	with := func(verb abi.KubeVerb, f func(*abi.KubeRequest)) abi.KubeRequest {
		r := cm
		r.Verb = verb
		if f != nil {
			f(&r)
		}
		return r
	}

	body := do(t, c, with(abi.VerbCreate, func(r *abi.KubeRequest) {
		r.Body = cmBody("one", map[string]string{"k": "v"}, map[string]string{"app": "x"})
	}), 0)
	if body["metadata"].(map[string]any)["namespace"] != ns {
		t.Errorf("create: %v", body)
	}
	do(t, c, with(abi.VerbCreate, func(r *abi.KubeRequest) { r.Body = cmBody("one", nil, nil) }), 409)
	do(t, c, with(abi.VerbCreate, func(r *abi.KubeRequest) { r.Body = cmBody("two", nil, map[string]string{"app": "y"}) }), 0)

	body = do(t, c, with(abi.VerbGet, func(r *abi.KubeRequest) { r.Name = "one" }), 0)
	if dataOf(body)["k"] != "v" {
		t.Errorf("get: %v", body)
	}
	body = do(t, c, with(abi.VerbList, func(r *abi.KubeRequest) { r.LabelSelector = "app=x" }), 0)
	if items := body["items"].([]any); len(items) != 1 || !strings.HasSuffix(body["kind"].(string), "List") {
		t.Errorf("list app=x: %v", body)
	}
	body = do(t, c, with(abi.VerbList, func(r *abi.KubeRequest) { r.FieldSelector = "metadata.name=two" }), 0)
	if items := body["items"].([]any); len(items) != 1 {
		t.Errorf("list metadata.name=two: %d items", len(items))
	}

	body = do(t, c, with(abi.VerbGet, func(r *abi.KubeRequest) { r.Name = "one" }), 0)
	body["data"] = map[string]any{"k": "updated"}
	raw, _ := json.Marshal(body)
	body = do(t, c, with(abi.VerbUpdate, func(r *abi.KubeRequest) { r.Body = raw }), 0)
	if dataOf(body)["k"] != "updated" {
		t.Errorf("update: %v", body)
	}
	do(t, c, with(abi.VerbUpdate, func(r *abi.KubeRequest) { r.Body = raw }), 409) // stale resourceVersion

	body = do(t, c, with(abi.VerbPatch, func(r *abi.KubeRequest) {
		r.Name, r.PatchType, r.Body = "one", abi.PatchMerge, json.RawMessage(`{"data":{"m":"merged"}}`)
	}), 0)
	if dataOf(body)["m"] != "merged" {
		t.Errorf("merge patch: %v", body)
	}
	body = do(t, c, with(abi.VerbPatch, func(r *abi.KubeRequest) {
		r.Name, r.PatchType, r.Body = "one", abi.PatchJSON, json.RawMessage(`[{"op":"remove","path":"/data/m"}]`)
	}), 0)
	if _, ok := dataOf(body)["m"]; ok {
		t.Errorf("JSON patch: %v", body)
	}
	do(t, c, with(abi.VerbPatch, func(r *abi.KubeRequest) {
		r.Name, r.PatchType, r.Body = "one", abi.PatchJSON, json.RawMessage(`[{"op":"test","path":"/data/k","value":"nope"}]`)
	}), 422)

	// Server-side apply: a second manager conflicts unless it forces.
	applied := cmBody("applied", map[string]string{"owner": "a"}, nil)
	body = do(t, c, with(abi.VerbApply, func(r *abi.KubeRequest) { r.Body, r.FieldManager = applied, "manager-a" }), 0)
	if dataOf(body)["owner"] != "a" {
		t.Errorf("apply: %v", body)
	}
	takeover := cmBody("applied", map[string]string{"owner": "b"}, nil)
	do(t, c, with(abi.VerbApply, func(r *abi.KubeRequest) { r.Body, r.FieldManager = takeover, "manager-b" }), 409)
	body = do(t, c, with(abi.VerbApply, func(r *abi.KubeRequest) {
		r.Body, r.FieldManager, r.Force = takeover, "manager-b", true
	}), 0)
	if dataOf(body)["owner"] != "b" {
		t.Errorf("forced apply: %v", body)
	}

	do(t, c, with(abi.VerbDelete, func(r *abi.KubeRequest) { r.Name = "one" }), 0)
	do(t, c, with(abi.VerbGet, func(r *abi.KubeRequest) { r.Name = "one" }), 404)
	do(t, c, with(abi.VerbDelete, func(r *abi.KubeRequest) { r.Name = "one" }), 404)

	// Requests the host refuses itself, and a kind the cluster does not serve.
	do(t, c, with(abi.VerbGet, func(r *abi.KubeRequest) { r.Name = "" }), 400)
	do(t, c, with(abi.VerbCreate, func(r *abi.KubeRequest) { r.Body = json.RawMessage(`not json`) }), 400)
	do(t, c, with(abi.VerbList, func(r *abi.KubeRequest) { r.LabelSelector = "a in (" }), 400)
	resp := c.Do(t.Context(), abi.KubeRequest{Verb: abi.VerbList, Group: "nope.example", Version: "v1", Resource: "gizmos"})
	if resp.Error == nil || resp.Error.Code != 404 || resp.Error.Origin != abi.OriginCluster ||
		!strings.Contains(resp.Error.Message, "gizmos.v1.nope.example") {
		t.Errorf("unserved kind: %+v", resp.Error)
	}
}

// Reads of a watched resource and namespace come from the watch cache.
func TestE2EDoFromCache(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-do-cache")
	create(t, dyn, kexGVR, kex(ns, "cached", map[string]string{"app": "x"}))
	scope, _ := ParseNamespaces(ns)
	w, err := c.Watch(t.Context(), resolve(t, c, "kopfexamples"), scope, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	kexReq := abi.KubeRequest{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples", Namespace: ns}
	reads := c.Stats().Reads
	get, list := kexReq, kexReq
	get.Verb, get.Name = abi.VerbGet, "cached"
	list.Verb, list.LabelSelector = abi.VerbList, "app=x"
	if body := do(t, c, get, 0); body["metadata"].(map[string]any)["name"] != "cached" {
		t.Errorf("get from the cache: %v", body)
	}
	if body := do(t, c, list, 0); len(body["items"].([]any)) != 1 || body["kind"] != "KopfExampleList" {
		t.Errorf("list from the cache: %v", body)
	}
	if got := c.Stats().Reads - reads; got != 0 {
		t.Errorf("%d reads reached the server; want 0", got)
	}
	// Another namespace is not covered: the server answers.
	other := get
	other.Namespace = "default"
	do(t, c, other, 404)
	if got := c.Stats().Reads - reads; got != 1 {
		t.Errorf("%d reads reached the server; want 1", got)
	}
}
