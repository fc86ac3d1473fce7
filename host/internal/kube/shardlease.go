package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// Lease is the part of a coordination.k8s.io/v1 Lease that membership
// (sharding) reads and writes.
type Lease struct {
	Namespace, Name string
	Labels          map[string]string
	Annotations     map[string]string
	// Holder is spec.holderIdentity; DurationSeconds spec.leaseDurationSeconds.
	Holder          string
	DurationSeconds int32
	// RenewTime is spec.renewTime, in microseconds as the API keeps it.
	RenewTime time.Time
	// ResourceVersion is empty for a Lease not yet created; [Client.PutLease]
	// creates it then, and replaces it (optimistically) otherwise.
	ResourceVersion string
}

// ListLeases lists the Leases of a namespace that match a label selector,
// in one request, without retries (membership polls again soon); one that
// runs out of its time without an answer is reported as a retried one is
// (conns.go).
func (c *Client) ListLeases(ctx context.Context, namespace, selector string) ([]Lease, error) {
	info := reqInfo{verb: "list", resource: gvrString(leasesGVR), namespace: namespace}
	var list *unstructured.UnstructuredList
	err := c.retry.single().do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		var err error
		list, err = c.dyn.Resource(leasesGVR).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	out := make([]Lease, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, leaseOf(&list.Items[i]))
	}
	return out, nil
}

// PutLease creates the Lease (no ResourceVersion) or replaces it at its
// ResourceVersion (a conflict wraps [ErrConflict]), in one request, and
// returns what the API server stored.
func (c *Client) PutLease(ctx context.Context, l Lease) (Lease, error) {
	verb := "update"
	if l.ResourceVersion == "" {
		verb = "create"
	}
	info := reqInfo{verb: verb, resource: gvrString(leasesGVR), namespace: l.Namespace, name: l.Name}
	body := leaseBody(l)
	var got *unstructured.Unstructured
	err := c.retry.single().do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		var err error
		ri := c.dyn.Resource(leasesGVR).Namespace(l.Namespace)
		if verb == "create" {
			got, err = ri.Create(ctx, body, metav1.CreateOptions{FieldManager: c.kube.FieldManager})
		} else {
			got, err = ri.Update(ctx, body, metav1.UpdateOptions{FieldManager: c.kube.FieldManager})
		}
		return err
	})
	if err != nil {
		return Lease{}, fmt.Errorf("kube: %w", err)
	}
	return leaseOf(got), nil
}

// DeleteLease deletes a Lease, at its ResourceVersion when one is given
// (so that a Lease renewed meanwhile stays); one that is gone already is
// no error.
func (c *Client) DeleteLease(ctx context.Context, namespace, name, resourceVersion string) error {
	info := reqInfo{verb: "delete", resource: gvrString(leasesGVR), namespace: namespace, name: name}
	opts := metav1.DeleteOptions{}
	if resourceVersion != "" {
		opts.Preconditions = &metav1.Preconditions{ResourceVersion: &resourceVersion}
	}
	err := c.retry.single().do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		return c.dyn.Resource(leasesGVR).Namespace(namespace).Delete(ctx, name, opts)
	})
	if err != nil && !errors.Is(err, ErrGone) {
		return fmt.Errorf("kube: %w", err)
	}
	return nil
}

func leaseBody(l Lease) *unstructured.Unstructured {
	meta := map[string]any{"name": l.Name, "namespace": l.Namespace}
	if l.ResourceVersion != "" {
		meta["resourceVersion"] = l.ResourceVersion
	}
	if len(l.Labels) > 0 {
		meta["labels"] = stringsToAny(l.Labels)
	}
	if len(l.Annotations) > 0 {
		meta["annotations"] = stringsToAny(l.Annotations)
	}
	spec := map[string]any{"holderIdentity": l.Holder, "leaseDurationSeconds": int64(l.DurationSeconds)}
	if !l.RenewTime.IsZero() {
		spec["renewTime"] = l.RenewTime.UTC().Format(metav1.RFC3339Micro)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec,
	}}
}

func leaseOf(u *unstructured.Unstructured) Lease {
	l := Lease{
		Namespace: u.GetNamespace(), Name: u.GetName(), Labels: u.GetLabels(), Annotations: u.GetAnnotations(),
		ResourceVersion: u.GetResourceVersion(),
	}
	l.Holder, _, _ = unstructured.NestedString(u.Object, "spec", "holderIdentity")
	if d, ok, _ := unstructured.NestedInt64(u.Object, "spec", "leaseDurationSeconds"); ok {
		l.DurationSeconds = int32(d)
	}
	if s, ok, _ := unstructured.NestedString(u.Object, "spec", "renewTime"); ok {
		l.RenewTime, _ = time.Parse(metav1.RFC3339Micro, s)
	}
	return l
}

func stringsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
