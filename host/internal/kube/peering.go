package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// PeeringGroups are the API groups of Kopf's peering resources, in the
// order they are looked for: kopf.dev/v1, then the legacy zalando.org/v1.
var PeeringGroups = []string{"kopf.dev", "zalando.org"}

// PeeringResource finds the peering resource the cluster serves:
// clusterkopfpeerings (cluster-wide peering) or kopfpeerings (per
// namespace), of the first group of [PeeringGroups] that serves it. It
// wraps [ErrNotServed] when neither does (the CRD is not installed).
func (c *Client) PeeringResource(ctx context.Context, clusterwide bool) (Resource, error) {
	plural := "kopfpeerings"
	if clusterwide {
		plural = "clusterkopfpeerings"
	}
	var errs []error
	for _, group := range PeeringGroups {
		res, err := c.Lookup(ctx, schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural})
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, ErrNotServed) {
			return Resource{}, err
		}
		errs = append(errs, err)
	}
	return Resource{}, fmt.Errorf("kube: peering: %w", errors.Join(errs...))
}

// PatchPeering merges status into the peering object namespace/name of
// res (a merge patch on the object itself: Kopf's peering CRDs have no
// status subresource). A key set to nil removes that peer's record.
// [ErrGone] means the peering object does not exist.
func (c *Client) PatchPeering(ctx context.Context, res Resource, namespace, name string, status map[string]any) error {
	body, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("kube: peering %s: %w", name, err)
	}
	_, err = c.Patch(ctx, res.ResourceRef, namespace, name, "", abi.PatchMerge, body)
	return err
}
