package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// KubeCall is one Kubernetes request a module made, and how it was
// answered: host.KubeCall, which documents the fields.
type KubeCall struct {
	Request abi.KubeRequest `json:"request"`
	Code    int             `json:"code"`
	Source  string          `json:"source"`
	Message string          `json:"message,omitempty"`
}

// offlineHost serves the Kubernetes requests of an offline call: from the
// stored objects, which writes change (in memory only), and, with a
// cluster, reads the stored objects do not answer. Nothing is ever written
// to the cluster. Events and index look-ups are not available.
type offlineHost struct {
	wasmrt.NoHost
	cluster interface {
		Do(ctx context.Context, req abi.KubeRequest) abi.KubeResponse
	}
	record func(KubeCall)

	mu      sync.Mutex
	objects map[storeKey]map[string]any
}

// storeKey names a stored object: group, plural, namespace, name.
type storeKey struct{ group, plural, namespace, name string }

func newOfflineHost(objs []map[string]any, record func(KubeCall)) (*offlineHost, error) {
	h := &offlineHost{objects: map[storeKey]map[string]any{}, record: record}
	for i, obj := range objs {
		if err := h.add(obj); err != nil {
			return nil, fmt.Errorf("stored object %d: %w", i+1, err)
		}
	}
	return h, nil
}

// add stores an object, or the items of a List.
func (h *offlineHost) add(obj map[string]any) error {
	kind, _ := obj["kind"].(string)
	if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kind, "List") {
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return errors.New("a list item is not an object")
			}
			if err := h.add(m); err != nil {
				return err
			}
		}
		return nil
	}
	apiVersion, _ := obj["apiVersion"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return errors.New("it needs apiVersion, kind and metadata.name")
	}
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = ""
	}
	ns, _ := meta["namespace"].(string)
	h.objects[storeKey{group, pluralOf(kind), ns, name}] = obj
	return nil
}

// pluralOf guesses a kind's plural as Kubernetes names most resources.
func pluralOf(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		if k == "endpoints" {
			return k
		}
		return k + "es"
	case strings.HasSuffix(k, "y") && !strings.HasSuffix(k, "ay") && !strings.HasSuffix(k, "ey") && !strings.HasSuffix(k, "oy"):
		return strings.TrimSuffix(k, "y") + "ies"
	}
	return k + "s"
}

// Kube serves a request and records it.
func (h *offlineHost) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	resp, source := h.serve(ctx, req)
	if h.record != nil {
		call := KubeCall{Request: req, Code: http.StatusOK, Source: source}
		call.Request.Body = nil
		if resp.Error != nil {
			call.Code, call.Message = resp.Error.Code, resp.Error.Message
		}
		h.record(call)
	}
	return resp
}

func (h *offlineHost) serve(ctx context.Context, req abi.KubeRequest) (abi.KubeResponse, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := storeKey{req.Group, req.Resource, req.Namespace, req.Name}
	switch req.Verb {
	case abi.VerbGet:
		if obj, ok := h.objects[key]; ok {
			return storedReply(obj), "stored"
		}
		if h.cluster != nil {
			return h.cluster.Do(ctx, req), "cluster"
		}
		return storedNotFound(req), "stored"
	case abi.VerbList:
		return h.list(ctx, req)
	case abi.VerbCreate, abi.VerbUpdate, abi.VerbApply, abi.VerbPatch, abi.VerbDelete:
		if req.Subresource != "" && req.Subresource != "status" {
			return refused(http.StatusNotImplemented, "invoke does not serve the %s subresource", req.Subresource), "none"
		}
		return h.write(ctx, req), "stored"
	}
	return refused(http.StatusBadRequest, "unknown verb %q", req.Verb), "none"
}

// list answers from the stored objects, and with a cluster from both (the
// stored objects win by namespace and name).
func (h *offlineHost) list(ctx context.Context, req abi.KubeRequest) (abi.KubeResponse, string) {
	sel, err := labels.Parse(req.LabelSelector)
	if err != nil {
		return refused(http.StatusBadRequest, "label selector: %v", err), "none"
	}
	fsel, err := fields.ParseSelector(req.FieldSelector)
	if err != nil {
		return refused(http.StatusBadRequest, "field selector: %v", err), "none"
	}
	byName := map[string]any{}
	source := "stored"
	if h.cluster != nil {
		resp := h.cluster.Do(ctx, req)
		if resp.Error != nil {
			return resp, "cluster"
		}
		var list struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(resp.Body, &list); err != nil {
			return refused(http.StatusBadGateway, "the cluster's list: %v", err), "cluster"
		}
		for _, it := range list.Items {
			byName[nsName(it)] = it
		}
		source = "cluster"
	}
	for k, obj := range h.objects {
		if k.group != req.Group || k.plural != req.Resource || req.Namespace != "" && k.namespace != req.Namespace {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		if !sel.Matches(labels.Set(stringMap(meta["labels"]))) ||
			!fsel.Matches(fields.Set{"metadata.name": k.name, "metadata.namespace": k.namespace}) {
			continue
		}
		byName[nsName(obj)] = obj
	}
	keys := make([]string, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]any, 0, len(keys))
	for _, k := range keys {
		items = append(items, byName[k])
	}
	return storedReply(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}), source
}

// write changes the stored objects only (an object the cluster has is
// read first, then changed in memory).
func (h *offlineHost) write(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	var body map[string]any
	if req.Verb != abi.VerbPatch && req.Verb != abi.VerbDelete {
		if err := json.Unmarshal(req.Body, &body); err != nil || body == nil {
			return refused(http.StatusBadRequest, "the body is not an object")
		}
		if req.Name == "" {
			meta, _ := body["metadata"].(map[string]any)
			req.Name, _ = meta["name"].(string)
		}
	}
	key := storeKey{req.Group, req.Resource, req.Namespace, req.Name}
	cur, exists := h.objects[key]
	if !exists && h.cluster != nil && req.Verb != abi.VerbCreate {
		get := req
		get.Verb, get.Body, get.Subresource, get.PatchType = abi.VerbGet, nil, "", ""
		if resp := h.cluster.Do(ctx, get); resp.Error == nil {
			_ = json.Unmarshal(resp.Body, &cur)
			exists = cur != nil
		}
	}
	switch req.Verb {
	case abi.VerbCreate:
		if exists {
			return abi.KubeResponse{Error: &abi.HostError{Code: http.StatusConflict, Reason: "AlreadyExists", Origin: abi.OriginCluster,
				Message: fmt.Sprintf("%s %q already exists", req.Resource, req.Name)}}
		}
		setNamespace(body, req.Namespace)
		h.objects[key] = body
		return storedReply(body)
	case abi.VerbDelete:
		if !exists {
			return storedNotFound(req)
		}
		delete(h.objects, key)
		return storedReply(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"})
	case abi.VerbUpdate:
		if !exists {
			return storedNotFound(req)
		}
		setNamespace(body, req.Namespace)
		h.objects[key] = body
		return storedReply(body)
	}
	if !exists && req.Verb == abi.VerbApply {
		setNamespace(body, req.Namespace)
		h.objects[key] = body
		return storedReply(body)
	}
	if !exists {
		return storedNotFound(req)
	}
	patched, err := patchObject(cur, req)
	if err != nil {
		return refused(http.StatusUnprocessableEntity, "%v", err)
	}
	h.objects[key] = patched
	return storedReply(patched)
}

// patchObject applies a patch or an apply to a stored object: JSON patches
// as such, every other kind as a merge patch (which a strategic merge or an
// apply of plain fields amounts to).
func patchObject(cur map[string]any, req abi.KubeRequest) (map[string]any, error) {
	doc, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	var out []byte
	if req.Verb == abi.VerbPatch && req.PatchType == abi.PatchJSON {
		p, err := jsonpatch.DecodePatch(req.Body)
		if err == nil {
			out, err = p.Apply(doc)
		}
		if err != nil {
			return nil, fmt.Errorf("json patch: %w", err)
		}
	} else if out, err = jsonpatch.MergePatch(doc, req.Body); err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func setNamespace(obj map[string]any, ns string) {
	if ns == "" {
		return
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["namespace"] = ns
}

func nsName(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return ns + "/" + name
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func storedReply(obj any) abi.KubeResponse {
	raw, err := json.Marshal(obj)
	if err != nil {
		return refused(http.StatusInternalServerError, "encode: %v", err)
	}
	return abi.KubeResponse{Body: raw}
}

func storedNotFound(req abi.KubeRequest) abi.KubeResponse {
	where := strings.Trim(req.Namespace+"/"+req.Name, "/")
	return abi.KubeResponse{Error: &abi.HostError{Code: http.StatusNotFound, Reason: "NotFound", Origin: abi.OriginCluster,
		Message: fmt.Sprintf("%s %q not found among the stored objects", req.Resource, where)}}
}

func refused(code int, format string, args ...any) abi.KubeResponse {
	return abi.KubeResponse{Error: &abi.HostError{Code: code, Origin: abi.OriginHost, Message: fmt.Sprintf(format, args...)}}
}

// readOnlyCluster passes reads to a cluster client; it is only ever asked
// for gets and lists (offlineHost keeps writes in memory).
type readOnlyCluster struct{ c *kube.Client }

func (r readOnlyCluster) Do(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	if req.Verb != abi.VerbGet && req.Verb != abi.VerbList {
		return refused(http.StatusForbidden, "invoke makes no writes to the cluster")
	}
	return r.c.Do(ctx, req)
}

// connectReadOnly builds the read-only cluster of invoke --kubeconfig.
func connectReadOnly(inv Call) (readOnlyCluster, error) {
	c, err := inv.Connect()
	if err != nil {
		return readOnlyCluster{}, err
	}
	return readOnlyCluster{c: c}, nil
}
