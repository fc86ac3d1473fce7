package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Patch sends one PATCH to an object, or to its status when subresource
// is "status", and returns what the host reads of the object as the server
// left it (see [Patched]). kind is [abi.PatchMerge] (the reactor's usual
// patch), [abi.PatchJSON] (finalizers and guarded changes: a patch that
// does not apply, such as a failed "test" operation, comes back as
// [ErrConflict]) or [abi.PatchStrategic] (built-in kinds only). The
// namespace is ignored for cluster-scoped resources.
//
// Errors: [ErrGone] when the object no longer exists, which for the
// reactor means there is nothing left to do; [ErrConflict], [ErrInvalid],
// [ErrForbidden]; [ErrUnavailable] once the retries are used up.
func (c *Client) Patch(ctx context.Context, ref abi.ResourceRef, namespace, name, subresource string,
	kind abi.PatchType, patch []byte) (*Patched, error) {
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
	var raw []byte
	err = c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		res := c.raw.Patch(pt).AbsPath(objectPath(gvr, namespace, name, subresource)...).
			Param("fieldManager", c.kube.FieldManager).Body(patch).Do(ctx)
		if err := res.Error(); err != nil { // Error, not Raw: it decodes the API status
			return err
		}
		raw, _ = res.Raw()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	out, err := decodePatched(raw)
	if err != nil {
		return nil, fmt.Errorf("kube: patch %s %s: the response is not an object: %w", refString(ref), name, err)
	}
	return out, nil
}

// objectPath returns the URL path of an object (or of its subresource).
func objectPath(gvr schema.GroupVersionResource, namespace, name, subresource string) []string {
	path := make([]string, 0, 8)
	if gvr.Group == "" {
		path = append(path, "/api", gvr.Version)
	} else {
		path = append(path, "/apis", gvr.Group, gvr.Version)
	}
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	path = append(path, gvr.Resource, name)
	if subresource != "" {
		path = append(path, subresource)
	}
	return path
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
