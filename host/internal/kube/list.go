package kube

// Listing for the informers: the dynamic client's LIST request, its
// response decoded one item at a time by jsondecode.DecodeList.

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube/jsondecode"
)

// listJSON lists one resource in one namespace ("" for all) with the
// request the dynamic client's List sends, and decodes the response
// with jsondecode.DecodeList. Errors are client-go's, as the dynamic client returns
// them (the informer's reflector classifies them).
func (c *Client) listJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace string,
	opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if msgs := rest.IsValidPathSegmentName(namespace); len(msgs) != 0 {
		return nil, fmt.Errorf("invalid namespace %q: %v", namespace, msgs)
	}
	body, err := c.raw.Get().AbsPath(objectPath(gvr, namespace, "", "")...).
		SpecificallyVersionedParams(&opts, watchParams, metaV1).
		SetHeader("Accept", "application/json").
		Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return jsondecode.DecodeList(body, !c.kube.KeepManagedFields)
}
