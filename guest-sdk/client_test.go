package kopf

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TestKubeRequestGolden: the SDK encodes a server-side apply exactly as
// abi/testdata/kube-request.json.
func TestKubeRequestGolden(t *testing.T) {
	fresh(t).module = abi.ModuleInfo{Name: "kopfexample"}
	OnCreate("kopf.dev", "v1", "kopfexamples", func(ctx *Context) (any, error) {
		pod := Object{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "kopf-example-1-child"}}
		_, err := ctx.Client("", "v1", "pods").Namespace("default").Apply(pod)
		return nil, err
	}, ID("c"))
	host := &recorder{reply: replyWith(abi.KubeResponse{Body: json.RawMessage(`{}`)})}
	if resp := run(t, host, abi.Request{Handler: "c"}); resp.Outcome.Status != abi.OutcomeSuccess {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, host.calls[0].request, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	want, err := os.ReadFile(filepath.Join("..", "abi", "testdata", "kube-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("kube request:\n%s\nwant\n%s", got.Bytes(), want)
	}
}

func TestClientRequests(t *testing.T) {
	obj := Object{"metadata": map[string]any{"name": "n", "namespace": "objns"}}
	tests := []struct {
		name string
		call func(k Client) error
		want string
	}{
		{"get", func(k Client) error { _, err := k.Namespace("ns").Get("n"); return err },
			`{"verb":"get","group":"apps","version":"v1","resource":"deployments","namespace":"ns","name":"n"}`},
		{"list with selectors", func(k Client) error {
			_, err := k.List(ListOptions{LabelSelector: "a=b", FieldSelector: "metadata.name=n"})
			return err
		}, `{"verb":"list","group":"apps","version":"v1","resource":"deployments","labelSelector":"a=b","fieldSelector":"metadata.name=n"}`},
		{"create takes the object's namespace", func(k Client) error { _, err := k.Create(obj); return err },
			`{"verb":"create","group":"apps","version":"v1","resource":"deployments","namespace":"objns","body":{"metadata":{"name":"n","namespace":"objns"}}}`},
		{"update a subresource", func(k Client) error { _, err := k.Subresource("status").Update(obj); return err },
			`{"verb":"update","group":"apps","version":"v1","resource":"deployments","subresource":"status","namespace":"objns","name":"n","body":{"metadata":{"name":"n","namespace":"objns"}}}`},
		{"json patch", func(k Client) error {
			_, err := k.Namespace("ns").Patch("n", JSONPatch, []map[string]any{{"op": "remove", "path": "/x"}})
			return err
		}, `{"verb":"patch","group":"apps","version":"v1","resource":"deployments","namespace":"ns","name":"n","body":[{"op":"remove","path":"/x"}],"patchType":"json"}`},
		{"apply with a field manager", func(k Client) error { _, err := k.FieldManager("me").Apply(obj); return err },
			`{"verb":"apply","group":"apps","version":"v1","resource":"deployments","namespace":"objns","name":"n","body":{"metadata":{"name":"n","namespace":"objns"}},"fieldManager":"me","force":true}`},
		{"delete", func(k Client) error { return k.Namespace("ns").Delete("n") },
			`{"verb":"delete","group":"apps","version":"v1","resource":"deployments","namespace":"ns","name":"n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := &recorder{reply: replyWith(abi.KubeResponse{Body: json.RawMessage(`{"items":[]}`)})}
			ctx := &Context{req: &abi.Request{}, host: host, module: "m"}
			if err := tt.call(ctx.Client("apps", "v1", "deployments")); err != nil {
				t.Fatal(err)
			}
			if len(host.calls) != 1 || host.calls[0].fn != abi.HostKubeRequest {
				t.Fatalf("calls = %v", host.calls)
			}
			if got := string(host.calls[0].request); got != tt.want {
				t.Errorf("request:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestClientReplies(t *testing.T) {
	tests := []struct {
		name    string
		reply   []byte
		wantErr error
		origin  string
		want    string
	}{
		{"object", []byte(`{"body":{"metadata":{"name":"n"},"spec":{"replicas":2}}}`), nil, "", `{"metadata":{"name":"n"},"spec":{"replicas":2}}`},
		{"not found in the cluster", []byte(`{"error":{"code":404,"reason":"NotFound","message":"gone","origin":"cluster"}}`), ErrNotFound, OriginCluster, "null"},
		{"forbidden by the host", []byte(`{"error":{"code":403,"reason":"Forbidden","message":"undeclared","origin":"host"}}`), ErrForbidden, OriginHost, "null"},
		{"conflict", []byte(`{"error":{"code":409,"reason":"Conflict","message":"stale","origin":"cluster"}}`), ErrConflict, OriginCluster, "null"},
		{"no reply", nil, errNoReply, "", "null"},
		{"garbage", []byte(`{`), nil, "", "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := &recorder{reply: func(string, []byte) []byte { return tt.reply }}
			ctx := &Context{req: &abi.Request{}, host: host}
			obj, err := ctx.Client("", "v1", "pods").Namespace("ns").Get("n")
			if got := jsonString(t, obj); got != tt.want {
				t.Errorf("object = %s, want %s", got, tt.want)
			}
			switch {
			case tt.name == "garbage" && err == nil:
				t.Error("no error for a reply that is not JSON")
			case tt.wantErr == nil && tt.name != "garbage" && err != nil:
				t.Errorf("error = %v", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			var apiErr *APIError
			if tt.origin != "" && (!errors.As(err, &apiErr) || apiErr.Origin != tt.origin || apiErr.Call != "get pods ns/n") {
				t.Errorf("error = %#v, want an APIError from the %s about get pods ns/n", err, tt.origin)
			}
		})
	}
}

func TestListItems(t *testing.T) {
	host := &recorder{reply: replyWith(abi.KubeResponse{Body: json.RawMessage(`{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`)})}
	ctx := &Context{req: &abi.Request{}, host: host}
	items, err := ctx.Client("", "v1", "pods").List(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].String("metadata.name") != "a" || items[1].String("metadata.name") != "b" {
		t.Errorf("items = %v", items)
	}
}
