package kopftest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// store is a tiny in-memory stand-in for the API server: enough for
// handlers that read, create, update, merge-patch, apply and delete
// objects. Versions are ignored; objects are keyed by group and plural.
type store struct {
	objects map[string]map[string]any
	serial  int
}

func storeKey(group, resource, namespace, name string) string {
	return group + "/" + resource + "/" + namespace + "/" + name
}

// Add puts canned objects into the store of a resource (group "" for core).
func (h *Host) Add(group, resource string, objs ...map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, obj := range objs {
		obj = clone(obj)
		h.store.put(group, resource, obj)
	}
}

// Object returns a copy of a stored object.
func (h *Host) Object(group, resource, namespace, name string) (map[string]any, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	obj, ok := h.store.objects[storeKey(group, resource, namespace, name)]
	return clone(obj), ok
}

func (s *store) put(group, resource string, obj map[string]any) {
	if s.objects == nil {
		s.objects = map[string]map[string]any{}
	}
	s.serial++
	meta := metadata(obj)
	meta["resourceVersion"] = strconv.Itoa(s.serial)
	if meta["uid"] == nil {
		meta["uid"] = fmt.Sprintf("kopftest-uid-%d", s.serial)
	}
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	s.objects[storeKey(group, resource, ns, name)] = obj
}

func (s *store) serve(req abi.KubeRequest) abi.KubeResponse {
	key := storeKey(req.Group, req.Resource, req.Namespace, req.Name)
	current, exists := s.objects[key]
	var body map[string]any
	if len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, &body); err != nil && req.PatchType != abi.PatchJSON {
			return failure(400, "BadRequest", "the body is not a JSON object: "+err.Error())
		}
	}
	switch req.Verb {
	case abi.VerbGet:
		if !exists {
			return notFound(req)
		}
		return reply(current)
	case abi.VerbList:
		return reply(s.list(req))
	case abi.VerbCreate:
		return s.create(req, body)
	case abi.VerbUpdate:
		if !exists {
			return notFound(req)
		}
		if rv := metadata(body)["resourceVersion"]; rv != nil && rv != metadata(current)["resourceVersion"] {
			return failure(409, "Conflict", fmt.Sprintf("the object %s has been modified; apply your changes to the latest version", req.Name))
		}
		s.put(req.Group, req.Resource, withPlace(body, req))
		return reply(s.objects[key])
	case abi.VerbPatch, abi.VerbApply:
		if !exists && req.Verb == abi.VerbPatch {
			return notFound(req)
		}
		if req.PatchType == abi.PatchJSON {
			return failure(415, "UnsupportedMediaType", "kopftest's object store applies merge patches only; set Host.Kube to serve JSON patches")
		}
		merged, _ := mergePatch(clone(current), body).(map[string]any)
		s.put(req.Group, req.Resource, withPlace(merged, req))
		return reply(s.objects[key])
	case abi.VerbDelete:
		if !exists {
			return notFound(req)
		}
		delete(s.objects, key)
		return reply(current)
	}
	return failure(405, "MethodNotAllowed", "unknown verb "+string(req.Verb))
}

func (s *store) create(req abi.KubeRequest, body map[string]any) abi.KubeResponse {
	meta := metadata(body)
	if meta["name"] == nil && meta["generateName"] != nil {
		meta["name"] = fmt.Sprintf("%s%05d", meta["generateName"], s.serial+1)
	}
	body = withPlace(body, req)
	name, _ := meta["name"].(string)
	key := storeKey(req.Group, req.Resource, req.Namespace, name)
	if _, ok := s.objects[key]; ok {
		return failure(409, "AlreadyExists", fmt.Sprintf("%s %q already exists", req.Resource, name))
	}
	s.put(req.Group, req.Resource, body)
	return reply(s.objects[key])
}

func (s *store) list(req abi.KubeRequest) map[string]any {
	var keys []string
	prefix := storeKey(req.Group, req.Resource, "", "")
	prefix = strings.TrimSuffix(prefix, "/")
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	items := []any{}
	for _, k := range keys {
		obj := s.objects[k]
		meta := metadata(obj)
		if req.Namespace != "" && meta["namespace"] != req.Namespace {
			continue
		}
		labels, _ := meta["labels"].(map[string]any)
		if selects(req.LabelSelector, labels) {
			items = append(items, obj)
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
}

// selects matches equality-based label selectors: "a=b,c!=d,e,!f".
func selects(selector string, labels map[string]any) bool {
	for _, term := range strings.Split(selector, ",") {
		term = strings.TrimSpace(term)
		switch {
		case term == "":
		case strings.Contains(term, "!="):
			k, v, _ := strings.Cut(term, "!=")
			if labels[strings.TrimSpace(k)] == strings.TrimSpace(v) {
				return false
			}
		case strings.Contains(term, "="):
			k, v, _ := strings.Cut(strings.Replace(term, "==", "=", 1), "=")
			if labels[strings.TrimSpace(k)] != strings.TrimSpace(v) {
				return false
			}
		case strings.HasPrefix(term, "!"):
			if _, ok := labels[term[1:]]; ok {
				return false
			}
		default:
			if _, ok := labels[term]; !ok {
				return false
			}
		}
	}
	return true
}

// mergePatch applies an RFC 7396 merge patch.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok || t == nil {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func withPlace(obj map[string]any, req abi.KubeRequest) map[string]any {
	meta := metadata(obj)
	if req.Namespace != "" {
		meta["namespace"] = req.Namespace
	}
	if req.Name != "" && meta["name"] == nil {
		meta["name"] = req.Name
	}
	return obj
}

// metadata returns obj's metadata, creating it; a nil obj gives a scratch map.
func metadata(obj map[string]any) map[string]any {
	if obj == nil {
		return map[string]any{}
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	return meta
}

func clone(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	var out map[string]any
	_ = json.Unmarshal(mustJSON(obj), &out)
	return out
}

func reply(obj map[string]any) abi.KubeResponse { return abi.KubeResponse{Body: mustJSON(obj)} }

func notFound(req abi.KubeRequest) abi.KubeResponse {
	return failure(404, "NotFound", fmt.Sprintf("%s %q not found", resourceName(req), req.Name))
}

func failure(code int, reason, message string) abi.KubeResponse {
	return abi.KubeResponse{Error: &abi.HostError{Code: code, Reason: reason, Message: message, Origin: abi.OriginCluster}}
}
