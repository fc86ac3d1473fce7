package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Do carries out a guest's Kubernetes request. Gets and lists of a
// resource and namespace that a [Watch] covers are answered from its cache
// (without managedFields unless settings.Kube.KeepManagedFields; a get that
// misses the cache asks the server, in case the object is newer than the
// cache); everything else goes to the API server, with the transient
// failures retried (creates only after 429, which guarantees nothing was
// created). Failures come back as an [abi.HostError] with the HTTP code:
// Origin "cluster" when the server refused or does not serve the resource
// (404), "host" when the request itself is malformed (400). Whether the
// module may make the request at all is checked before, by the caller.
func (c *Client) Do(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	return c.do(ctx, req, false)
}

// DoDryRun is [Client.Do] with every write (create, update, patch, apply,
// delete) sent as a dry run (dryRun=All): the API server validates and
// admits it and answers as if it were stored, but stores nothing. Reads
// are as in Do. Shadow versions of modules get their writes answered so.
func (c *Client) DoDryRun(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	return c.do(ctx, req, true)
}

func (c *Client) do(ctx context.Context, req abi.KubeRequest, dryRun bool) abi.KubeResponse {
	gvr := schema.GroupVersionResource{Group: req.Group, Version: req.Version, Resource: req.Resource}
	if err := checkRequest(req); err != nil {
		return abi.KubeResponse{Error: badRequest(err)}
	}
	res, err := c.disc.lookup(ctx, gvr)
	if err != nil {
		return abi.KubeResponse{Error: hostError(err)}
	}
	g := guestReq{c: c, req: req, res: res, gvr: gvr}
	if dryRun {
		g.dryRun = []string{metav1.DryRunAll}
	}
	if err := g.prepare(); err != nil {
		return abi.KubeResponse{Error: badRequest(err)}
	}
	body, err := g.do(ctx)
	if err != nil {
		return abi.KubeResponse{Error: hostError(err)}
	}
	return abi.KubeResponse{Body: body}
}

func checkRequest(req abi.KubeRequest) error {
	switch req.Verb {
	case abi.VerbGet, abi.VerbList, abi.VerbCreate, abi.VerbUpdate, abi.VerbPatch, abi.VerbApply, abi.VerbDelete:
	default:
		return fmt.Errorf("unknown verb %q", req.Verb)
	}
	if req.Version == "" || req.Resource == "" {
		return errors.New("version and resource are required")
	}
	if (req.Verb == abi.VerbGet || req.Verb == abi.VerbPatch || req.Verb == abi.VerbDelete) && req.Name == "" {
		return fmt.Errorf("%s needs a name", req.Verb)
	}
	if req.Verb == abi.VerbCreate || req.Verb == abi.VerbUpdate || req.Verb == abi.VerbApply || req.Verb == abi.VerbPatch {
		if len(req.Body) == 0 {
			return fmt.Errorf("%s needs a body", req.Verb)
		}
	}
	return nil
}

// guestReq is one guest request on its way to the server.
type guestReq struct {
	c   *Client
	req abi.KubeRequest
	res Resource
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured // the decoded body of create, update, apply
	sel labels.Selector            // list
	pt  types.PatchType            // patch
	// dryRun is the writes' dryRun option (DoDryRun: [All]).
	dryRun []string
}

// prepare decodes the body and settles the name and namespace: a
// cluster-scoped resource has none, a namespaced one takes the body's when
// the request names none.
func (g *guestReq) prepare() error {
	var err error
	switch g.req.Verb {
	case abi.VerbList:
		if g.sel, err = labels.Parse(g.req.LabelSelector); err != nil {
			return fmt.Errorf("label selector: %w", err)
		}
	case abi.VerbPatch:
		if g.pt, err = patchType(g.req.PatchType); err != nil {
			return err
		}
	case abi.VerbCreate, abi.VerbUpdate, abi.VerbApply:
		g.obj = &unstructured.Unstructured{}
		if err := g.obj.UnmarshalJSON(g.req.Body); err != nil {
			return fmt.Errorf("body: %w", err)
		}
		if g.req.Name == "" {
			g.req.Name = g.obj.GetName()
		}
		if g.req.Namespace == "" {
			g.req.Namespace = g.obj.GetNamespace()
		}
	}
	if !g.res.Namespaced {
		g.req.Namespace = ""
	} else if g.req.Namespace == "" && g.req.Verb != abi.VerbList {
		return fmt.Errorf("%s of %s needs a namespace", g.req.Verb, g.res)
	}
	if g.req.Name == "" && (g.req.Verb == abi.VerbUpdate || g.req.Verb == abi.VerbApply) {
		return fmt.Errorf("%s needs a name (in the request or the body)", g.req.Verb)
	}
	if g.obj != nil && g.res.Namespaced {
		g.obj.SetNamespace(g.req.Namespace)
	}
	return nil
}

func (g *guestReq) do(ctx context.Context) (json.RawMessage, error) {
	switch g.req.Verb {
	case abi.VerbGet:
		return g.get(ctx)
	case abi.VerbList:
		return g.list(ctx)
	case abi.VerbDelete:
		return nil, g.send(ctx, func(ctx context.Context, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
			return nil, ri.Delete(ctx, g.req.Name, metav1.DeleteOptions{DryRun: g.dryRun}, subresources(g.req.Subresource)...)
		})
	default:
		return g.write(ctx)
	}
}

func (g *guestReq) get(ctx context.Context) (json.RawMessage, error) {
	if s := g.c.cacheFor(g.gvr, g.req.Namespace); s != nil && g.req.Subresource == "" {
		if obj, ok := s.get(g.req.Namespace, g.req.Name); ok {
			return obj.MarshalJSON()
		}
	}
	return g.sendJSON(ctx, func(ctx context.Context, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		return ri.Get(ctx, g.req.Name, metav1.GetOptions{}, subresources(g.req.Subresource)...)
	})
}

func (g *guestReq) list(ctx context.Context) (json.RawMessage, error) {
	if s := g.c.cacheFor(g.gvr, g.req.Namespace); s != nil && g.req.FieldSelector == "" {
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"apiVersion": g.gvr.GroupVersion().String(), "kind": g.res.Kind + "List", "metadata": map[string]any{},
		}}
		for _, obj := range s.list(g.req.Namespace, g.sel) {
			list.Items = append(list.Items, *obj)
		}
		return list.MarshalJSON()
	}
	var list *unstructured.UnstructuredList
	err := g.c.retry.do(ctx, g.wrap, func(ctx context.Context) error {
		var err error
		list, err = g.ri().List(ctx, metav1.ListOptions{LabelSelector: g.req.LabelSelector, FieldSelector: g.req.FieldSelector})
		return err
	})
	if err != nil {
		return nil, err
	}
	return list.MarshalJSON()
}

// write carries out create, update, patch and apply.
func (g *guestReq) write(ctx context.Context) (json.RawMessage, error) {
	manager := g.req.FieldManager
	if manager == "" {
		manager = g.c.kube.FieldManager
	}
	if g.req.Verb == abi.VerbCreate {
		return g.create(ctx, manager)
	}
	subs := subresources(g.req.Subresource)
	return g.sendJSON(ctx, func(ctx context.Context, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		switch g.req.Verb {
		case abi.VerbUpdate:
			return ri.Update(ctx, g.obj, metav1.UpdateOptions{FieldManager: manager, DryRun: g.dryRun}, subs...)
		case abi.VerbApply:
			force := g.req.Force
			return ri.Patch(ctx, g.req.Name, types.ApplyPatchType, g.req.Body,
				metav1.PatchOptions{FieldManager: manager, Force: &force, DryRun: g.dryRun}, subs...)
		}
		return ri.Patch(ctx, g.req.Name, g.pt, g.req.Body, metav1.PatchOptions{FieldManager: manager, DryRun: g.dryRun}, subs...)
	})
}

// create sends a create with the client's retries, each attempt one
// request: client-go's rest client (the dynamic client's) would repeat a
// create whose 5xx answer carries Retry-After, and a create answered 5xx
// may have created the object (the repeat then fails with AlreadyExists);
// send retries it only after a 429, which guarantees nothing was created.
func (g *guestReq) create(ctx context.Context, manager string) (json.RawMessage, error) {
	body, err := g.obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: body: %v", ErrInvalid, err)
	}
	name := ""
	if g.req.Subresource != "" {
		name = g.req.Name // a create on a subresource names its object
	}
	var raw []byte
	err = g.send(ctx, func(ctx context.Context, _ dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		req := g.c.raw.Post().AbsPath(objectPath(g.gvr, g.req.Namespace, name, g.req.Subresource)...)
		if manager != "" {
			req = req.Param("fieldManager", manager)
		}
		for _, d := range g.dryRun {
			req = req.Param("dryRun", d)
		}
		res := req.Body(body).MaxRetries(0).Do(ctx)
		if err := res.Error(); err != nil { // Error, not Raw: it decodes the API status
			return nil, err
		}
		raw, _ = res.Raw()
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// sendJSON sends a request that returns an object and encodes it.
func (g *guestReq) sendJSON(ctx context.Context, fn func(context.Context, dynamic.ResourceInterface) (*unstructured.Unstructured, error)) (json.RawMessage, error) {
	var out *unstructured.Unstructured
	err := g.send(ctx, func(ctx context.Context, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		var err error
		out, err = fn(ctx, ri)
		return out, err
	})
	if err != nil {
		return nil, err
	}
	return out.MarshalJSON()
}

// send runs one request with the client's retries; a create is retried
// only when the server said 429 (it created nothing).
func (g *guestReq) send(ctx context.Context, fn func(context.Context, dynamic.ResourceInterface) (*unstructured.Unstructured, error)) error {
	r := g.c.retry
	if g.req.Verb == abi.VerbCreate {
		r.retryable = func(err error) bool {
			var apiErr *APIError
			return errors.As(err, &apiErr) && apiErr.Code == http.StatusTooManyRequests
		}
	}
	return r.do(ctx, g.wrap, func(ctx context.Context) error {
		_, err := fn(ctx, g.ri())
		return err
	})
}

func (g *guestReq) ri() dynamic.ResourceInterface {
	return g.c.dyn.Resource(g.gvr).Namespace(g.req.Namespace)
}

func (g *guestReq) wrap(err error) error {
	return wrapAPI(reqInfo{verb: string(g.req.Verb), resource: g.res.String() + subPath(g.req.Subresource),
		namespace: g.req.Namespace, name: g.req.Name, jsonPatch: g.req.PatchType == abi.PatchJSON}, err)
}

// cacheFor returns a synced watch cache that holds the objects of gvr in
// namespace ("" meaning all namespaces, or a cluster-scoped resource), or nil.
func (c *Client) cacheFor(gvr schema.GroupVersionResource, namespace string) *scope {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, w := range c.watches[gvr] {
		if s := w.scopeFor(namespace); s != nil {
			return s
		}
	}
	return nil
}

// hostError maps an error of this package to the ABI's error.
func hostError(err error) *abi.HostError {
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.Code != 0:
		// The server's words only: the guest's error names the call, the
		// code and the reason itself.
		return &abi.HostError{Code: apiErr.Code, Reason: string(apiErr.Reason), Message: oneLine(apiErr.Message), Origin: abi.OriginCluster}
	case errors.Is(err, ErrNotServed):
		return &abi.HostError{Code: http.StatusNotFound, Reason: string(metav1.StatusReasonNotFound), Message: err.Error(), Origin: abi.OriginCluster}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &abi.HostError{Code: http.StatusGatewayTimeout, Reason: string(metav1.StatusReasonTimeout), Message: err.Error(), Origin: abi.OriginHost}
	case errors.Is(err, ErrInvalid):
		return badRequest(err)
	}
	return &abi.HostError{Code: http.StatusServiceUnavailable, Reason: string(metav1.StatusReasonServiceUnavailable), Message: err.Error(), Origin: abi.OriginCluster}
}

func badRequest(err error) *abi.HostError {
	return &abi.HostError{Code: http.StatusBadRequest, Reason: string(metav1.StatusReasonBadRequest),
		Message: "kubernetes request: " + err.Error(), Origin: abi.OriginHost}
}
