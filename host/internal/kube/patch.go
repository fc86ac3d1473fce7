package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Patch sends one PATCH to an object, or to its status when subresource
// is "status", and returns the object as the server left it. kind is
// [abi.PatchMerge] (the reactor's usual patch), [abi.PatchJSON] (finalizers
// and guarded changes: a patch that does not apply, such as a failed
// "test" operation, comes back as [ErrConflict]) or [abi.PatchStrategic]
// (built-in kinds only). The namespace is ignored for cluster-scoped
// resources.
//
// Errors: [ErrGone] when the object no longer exists, which for the
// reactor means there is nothing left to do; [ErrConflict], [ErrInvalid],
// [ErrForbidden]; [ErrUnavailable] once the retries are used up.
func (c *Client) Patch(ctx context.Context, ref abi.ResourceRef, namespace, name, subresource string,
	kind abi.PatchType, patch []byte) (*unstructured.Unstructured, error) {
	pt, err := patchType(kind)
	if err != nil {
		return nil, fmt.Errorf("kube: patch %s %s: %w", refString(ref), name, err)
	}
	if !ref.Namespaced {
		namespace = ""
	}
	gvr := schema.GroupVersionResource{Group: ref.Group, Version: ref.Version, Resource: ref.Plural}
	info := reqInfo{verb: "patch", resource: gvrString(gvr) + subPath(subresource),
		namespace: namespace, name: name, jsonPatch: pt == types.JSONPatchType}
	var out *unstructured.Unstructured
	err = c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		var err error
		out, err = c.dyn.Resource(gvr).Namespace(namespace).Patch(ctx, name, pt, patch,
			metav1.PatchOptions{FieldManager: c.opts.FieldManager}, subresources(subresource)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	return out, nil
}

// patchType maps the ABI's patch names to content types; "" is a merge
// patch.
func patchType(kind abi.PatchType) (types.PatchType, error) {
	switch kind {
	case abi.PatchMerge, "":
		return types.MergePatchType, nil
	case abi.PatchJSON:
		return types.JSONPatchType, nil
	case abi.PatchStrategic:
		return types.StrategicMergePatchType, nil
	}
	return "", fmt.Errorf("%w: unknown patch type %q (want merge, json or strategic)", ErrInvalid, kind)
}

func refString(ref abi.ResourceRef) string {
	return gvrString(schema.GroupVersionResource{Group: ref.Group, Version: ref.Version, Resource: ref.Plural})
}

func subresources(sub string) []string {
	if sub == "" {
		return nil
	}
	return []string{sub}
}

func subPath(sub string) string {
	if sub == "" {
		return ""
	}
	return "/" + sub
}
