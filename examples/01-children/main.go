// Command 01-children is an example operator whose create handler makes
// child Pods for every KopfExample and adopts them: each Pod gets a
// controller owner reference to the parent, the parent's namespace and
// labels, so that deleting the parent garbage-collects its children.
//
// spec.children says how many Pods (default 2); they are named
// <parent>-<n>, so a retried handler finds the ones it made before.
package main

import (
	"errors"
	"fmt"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("children", "0.1.0")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createChildren, kopf.ID("create_children"))
	kopf.Permit("", "pods", "create")
}

func createChildren(ctx *kopf.Context) (any, error) {
	n := 2
	if v, ok := ctx.Spec().Get("children"); ok {
		c, whole := kopf.IntOf(v)
		if !whole || c < 0 || c > 10 {
			return nil, kopf.PermanentError{Message: fmt.Sprintf("spec.children must be a whole number from 0 to 10, not %v", v)}
		}
		n = int(c)
	}
	pods := ctx.Client("", "v1", "pods").Namespace(ctx.Namespace())
	names := []string{}
	for i := range n {
		pod := kopf.Object{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", ctx.Name(), i)},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "main", "image": "busybox", "command": []any{"sleep", "3600"},
			}}},
		}
		ctx.Adopt(pod)
		_, err := pods.Create(pod)
		if err != nil && !errors.Is(err, kopf.ErrAlreadyExists) {
			return nil, err // arbitrary: retried after the backoff
		}
		names = append(names, pod.String("metadata.name"))
		ctx.Logger().Info("child pod created", "pod", pod.String("metadata.name"))
	}
	return map[string]any{"children": names}, nil
}

// main never runs: the host initialises the module through _initialize.
func main() {}
