package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The webhook configurations the admission engine manages.
var (
	validatingWebhookConfigurations = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutatingWebhookConfigurations   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
)

// SetWebhooks makes the ValidatingWebhookConfiguration (or, when mutating
// is set, the MutatingWebhookConfiguration) named name hold exactly
// webhooks (a JSON list of webhook entries): it creates the configuration
// when it does not exist (a create that finds one is fine), and otherwise
// replaces its webhooks with a merge patch, as Kopf's managed
// configurations do. The configuration is labelled as managed by the
// host's field manager.
func (c *Client) SetWebhooks(ctx context.Context, mutating bool, name string, webhooks json.RawMessage) error {
	gvr, kind := validatingWebhookConfigurations, "ValidatingWebhookConfiguration"
	if mutating {
		gvr, kind = mutatingWebhookConfigurations, "MutatingWebhookConfiguration"
	}
	var list []any
	if err := json.Unmarshal(webhooks, &list); err != nil {
		return fmt.Errorf("kube: %s %s: the webhooks are not a JSON list: %w", kind, name, err)
	}
	ri := c.dyn.Resource(gvr)
	patch, err := json.Marshal(map[string]any{"webhooks": webhooks})
	if err != nil {
		return err
	}
	info := reqInfo{verb: "patch", resource: gvrString(gvr), name: name}
	err = c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		_, err := ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: c.kube.FieldManager})
		return err
	})
	if !errors.Is(err, ErrGone) {
		if err != nil {
			return fmt.Errorf("kube: %w", err)
		}
		return nil
	}
	if list == nil {
		list = []any{}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/managed-by": c.kube.FieldManager}},
		"webhooks": list,
	}}
	info.verb = "create"
	err = c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: c.kube.FieldManager})
		return err
	})
	if errors.Is(err, ErrExists) { // created meanwhile: patch it
		return c.SetWebhooks(ctx, mutating, name, webhooks)
	}
	if err != nil {
		return fmt.Errorf("kube: %w", err)
	}
	return nil
}

var customResourceDefinitions = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// SetConversion replaces the spec.conversion of the CRD named crd (e.g.
// {"strategy":"Webhook","webhook":{...}}), with a JSON patch so that no
// field of the previous conversion is left behind. It returns the versions
// the CRD serves, as the patched CRD says.
func (c *Client) SetConversion(ctx context.Context, crd string, conversion json.RawMessage) (served []string, err error) {
	patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/conversion", "value": conversion}})
	if err != nil {
		return nil, err
	}
	info := reqInfo{verb: "patch", resource: gvrString(customResourceDefinitions), name: crd, jsonPatch: true}
	var obj *unstructured.Unstructured
	err = c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		var err error
		obj, err = c.dyn.Resource(customResourceDefinitions).Patch(ctx, crd, types.JSONPatchType, patch,
			metav1.PatchOptions{FieldManager: c.kube.FieldManager})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if name, _ := m["name"].(string); name != "" && m["served"] == true {
			served = append(served, name)
		}
	}
	return served, nil
}
