package kube

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Secret is what the host keeps in a core/v1 Secret: its type, its data
// (decoded) and, when read, the resourceVersion an update must carry.
type Secret struct {
	Type            string
	Data            map[string][]byte
	ResourceVersion string
}

// GetSecret reads the Secret namespace/name; [ErrGone] means there is none.
func (c *Client) GetSecret(ctx context.Context, namespace, name string) (*Secret, error) {
	obj, err := c.getSecretObject(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return secretOf(obj)
}

// getSecretObject reads the Secret namespace/name as the API server has it.
func (c *Client) getSecretObject(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	var obj *unstructured.Unstructured
	err := c.secretCall(ctx, "get", namespace, name, func(ctx context.Context) (err error) {
		obj, err = c.dyn.Resource(secrets).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	return obj, err
}

// CreateSecret creates the Secret namespace/name, labelled as managed by
// the host's field manager; [ErrExists] means another writer created it
// first (read it then). It returns the Secret as created.
func (c *Client) CreateSecret(ctx context.Context, namespace, name string, s Secret) (*Secret, error) {
	obj := c.secretObject(namespace, name, s)
	err := c.secretCall(ctx, "create", namespace, name, func(ctx context.Context) (err error) {
		obj, err = c.dyn.Resource(secrets).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: c.kube.FieldManager})
		return err
	})
	if err != nil {
		return nil, err
	}
	return secretOf(obj)
}

// UpdateSecret sets the data keys of s.Data in the Secret namespace/name
// if it is still at s.ResourceVersion. It reads the Secret and puts it
// back with only those keys changed, at s.ResourceVersion: its type, its
// other data keys, labels, annotations, owners and finalizers (a deploy
// tool's) stay, and the verbs are get and update, as the rbac command
// grants on that Secret. [ErrConflict] means it changed since s was read
// (read it again), [ErrGone] that it was deleted. It returns the Secret
// as updated.
func (c *Client) UpdateSecret(ctx context.Context, namespace, name string, s Secret) (*Secret, error) {
	obj, err := c.getSecretObject(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range s.Data {
		data[k] = base64.StdEncoding.EncodeToString(v)
	}
	obj.Object["data"] = data
	obj.SetResourceVersion(s.ResourceVersion) // the precondition: as the caller read it
	err = c.secretCall(ctx, "update", namespace, name, func(ctx context.Context) (err error) {
		obj, err = c.dyn.Resource(secrets).Namespace(namespace).Update(ctx, obj, metav1.UpdateOptions{FieldManager: c.kube.FieldManager})
		return err
	})
	if err != nil {
		return nil, err
	}
	return secretOf(obj)
}

// secretCall sends one request on a Secret through the client's retrier.
func (c *Client) secretCall(ctx context.Context, verb, namespace, name string, call func(context.Context) error) error {
	info := reqInfo{verb: verb, resource: gvrString(secrets), namespace: namespace, name: name}
	if err := c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, call); err != nil {
		return fmt.Errorf("kube: %w", err)
	}
	return nil
}

// secretObject is s as an object to send.
func (c *Client) secretObject(namespace, name string, s Secret) *unstructured.Unstructured {
	data := make(map[string]any, len(s.Data))
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		data[k] = base64.StdEncoding.EncodeToString(s.Data[k])
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": s.Type, "data": data,
		"metadata": map[string]any{"name": name, "namespace": namespace,
			"labels": map[string]any{"app.kubernetes.io/managed-by": c.kube.FieldManager}},
	}}
}

// secretOf decodes a Secret object's type, data and resourceVersion.
func secretOf(obj *unstructured.Unstructured) (*Secret, error) {
	s := &Secret{ResourceVersion: obj.GetResourceVersion(), Data: map[string][]byte{}}
	s.Type, _, _ = unstructured.NestedString(obj.Object, "type")
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	for k, v := range data {
		str, _ := v.(string)
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return nil, fmt.Errorf("kube: secret %s/%s: data %q is not base64: %w", obj.GetNamespace(), obj.GetName(), k, err)
		}
		s.Data[k] = b
	}
	return s, nil
}
