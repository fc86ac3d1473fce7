package kopf_test

import (
	"encoding/json"
	"fmt"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func ExampleAdopt() {
	owner := kopf.Object{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{
		"name": "kopf-example-1", "namespace": "default", "uid": "6a2c4f0e", "labels": map[string]any{"app": "demo"}}}
	child := kopf.Object{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{}}
	kopf.Adopt(child, owner)
	out, _ := json.MarshalIndent(child["metadata"], "", "  ")
	fmt.Println(string(out))
	// Output:
	// {
	//   "generateName": "kopf-example-1-",
	//   "labels": {
	//     "app": "demo"
	//   },
	//   "namespace": "default",
	//   "ownerReferences": [
	//     {
	//       "apiVersion": "kopf.dev/v1",
	//       "blockOwnerDeletion": true,
	//       "controller": true,
	//       "kind": "KopfExample",
	//       "name": "kopf-example-1",
	//       "uid": "6a2c4f0e"
	//     }
	//   ]
	// }
}

func ExampleObject_Get() {
	var obj kopf.Object
	_ = json.Unmarshal([]byte(`{"spec":{"replicas":3,"template":{"metadata":{"name":"x"}}}}`), &obj)
	replicas, ok := obj.Get("spec.replicas")
	fmt.Println(replicas, ok, obj.String("spec.template.metadata.name"), obj.Map("status") == nil)
	// Output: 3 true x true
}
