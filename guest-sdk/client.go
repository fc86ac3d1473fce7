package kopf

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Client makes Kubernetes API requests for one resource through the host,
// within the permissions the module declared with [Permit]. Its methods
// return [*APIError] for refused requests. A Client is a value: Namespace
// and the other modifiers return changed copies.
type Client struct {
	ctx         *Context
	group       string
	version     string
	resource    string
	subresource string
	namespace   string
	manager     string
}

// PatchType is the content type of a patch request.
type PatchType = abi.PatchType

// Patch types.
const (
	MergePatch     = abi.PatchMerge
	JSONPatch      = abi.PatchJSON
	StrategicPatch = abi.PatchStrategic
)

// ListOptions filter a list request.
type ListOptions struct {
	LabelSelector string
	FieldSelector string
}

// Client returns a client for a resource: a group ("" for core), a version
// and a plural.
func (c *Context) Client(group, version, resource string) Client {
	return Client{ctx: c, group: group, version: version, resource: resource}
}

// Namespace returns the client for one namespace.
func (k Client) Namespace(ns string) Client { k.namespace = ns; return k }

// Subresource returns the client for a subresource ("status", "scale").
func (k Client) Subresource(s string) Client { k.subresource = s; return k }

// FieldManager sets the field manager of writes (server-side apply uses
// the module's name by default).
func (k Client) FieldManager(name string) Client { k.manager = name; return k }

// Get reads an object.
func (k Client) Get(name string) (Object, error) {
	return k.object(newGet(name), nil)
}

func newGet(name string) abi.KubeRequest { return abi.KubeRequest{Verb: abi.VerbGet, Name: name} }

func newList(opts ListOptions) abi.KubeRequest {
	return abi.KubeRequest{Verb: abi.VerbList, LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}
}

// List reads the objects of the client's namespace (all when none).
func (k Client) List(opts ListOptions) ([]Object, error) {
	list, err := k.object(newList(opts), nil)
	if err != nil {
		return nil, err
	}
	items, _ := list["items"].([]any)
	out := make([]Object, 0, len(items))
	for _, it := range items {
		out = append(out, asObject(it))
	}
	return out, nil
}

// Create creates an object; the namespace is the client's or the object's.
func (k Client) Create(obj Object) (Object, error) {
	return k.object(abi.KubeRequest{Verb: abi.VerbCreate}, obj)
}

// Update replaces an object (its metadata.resourceVersion guards conflicts).
func (k Client) Update(obj Object) (Object, error) {
	return k.object(abi.KubeRequest{Verb: abi.VerbUpdate, Name: obj.String("metadata.name")}, obj)
}

// Patch patches an object by name with a patch of the given type.
func (k Client) Patch(name string, typ PatchType, patch any) (Object, error) {
	return k.object(abi.KubeRequest{Verb: abi.VerbPatch, Name: name, PatchType: typ}, patch)
}

// Apply applies an object with server-side apply, taking ownership of its
// fields (force) as the module's field manager unless told otherwise.
func (k Client) Apply(obj Object) (Object, error) {
	manager := k.manager
	if manager == "" {
		manager = k.ctx.module
	}
	return k.object(abi.KubeRequest{Verb: abi.VerbApply, Name: obj.String("metadata.name"),
		FieldManager: manager, Force: true}, obj)
}

// Delete deletes an object.
func (k Client) Delete(name string) error {
	_, err := k.object(abi.KubeRequest{Verb: abi.VerbDelete, Name: name}, nil)
	return err
}

// object sends a request with an optional body and decodes the reply.
func (k Client) object(req abi.KubeRequest, body any) (Object, error) {
	raw, err := k.raw(req, body)
	if err != nil {
		return nil, err
	}
	var out Object
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("kopf: %s: decode the reply: %w", k.describe(k.complete(req, body)), err)
		}
	}
	return out, nil
}

// complete fills a request with the client's resource, namespace and
// field manager.
func (k Client) complete(req abi.KubeRequest, body any) abi.KubeRequest {
	req.Group, req.Version, req.Resource, req.Subresource = k.group, k.version, k.resource, k.subresource
	req.Namespace = k.namespace
	if obj, ok := body.(Object); ok && req.Namespace == "" {
		req.Namespace = obj.String("metadata.namespace")
	}
	if req.FieldManager == "" {
		req.FieldManager = k.manager
	}
	return req
}

// raw sends a request with an optional body and returns the reply's body.
func (k Client) raw(req abi.KubeRequest, body any) (json.RawMessage, error) {
	req = k.complete(req, body)
	call := k.describe(req)
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("kopf: %s: encode the body: %w", call, err)
		}
		req.Body = raw
	}
	var resp abi.KubeResponse
	if err := k.ctx.hostCall(abi.HostKubeRequest, req, &resp); err != nil {
		return nil, fmt.Errorf("kopf: %s: %w", call, err)
	}
	if resp.Error != nil {
		return nil, apiError(call, resp.Error)
	}
	return resp.Body, nil
}

// describe names a request for errors: "get pods default/x".
func (k Client) describe(req abi.KubeRequest) string {
	res := req.Resource
	if req.Group != "" {
		res += "." + req.Group
	}
	if req.Subresource != "" {
		res += "/" + req.Subresource
	}
	where := strings.Trim(req.Namespace+"/"+req.Name, "/")
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", req.Verb, res, where))
}
