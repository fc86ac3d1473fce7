package kopftest

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// hostFuncs serves the module's host function calls (the SDK's internal
// host interface).
type hostFuncs struct{ h *Host }

func (f hostFuncs) Call(fn string, request []byte) []byte { return f.h.hostFunc(fn, request) }

// hostFunc answers a host function call of the module and records it.
func (h *Host) hostFunc(fn string, request []byte) []byte {
	reply := h.answer(fn, request)
	h.mu.Lock()
	h.calls = append(h.calls, HostCall{Func: fn, Request: slices.Clone(request), Reply: reply})
	h.mu.Unlock()
	return reply
}

func (h *Host) answer(fn string, request []byte) []byte {
	switch fn {
	case abi.HostLog:
		return nil
	case abi.HostPostEvent:
		return mustJSON(abi.HostReply{})
	case abi.HostKubeRequest:
		var req abi.KubeRequest
		if err := json.Unmarshal(request, &req); err != nil {
			return mustJSON(abi.KubeResponse{Error: badRequest(err)})
		}
		return mustJSON(h.kube(req))
	case abi.HostIndexLookup:
		var req abi.IndexLookupRequest
		if err := json.Unmarshal(request, &req); err != nil {
			return mustJSON(abi.IndexLookupResponse{Error: badRequest(err)})
		}
		return mustJSON(h.lookup(req))
	case abi.HostSleepUntilStopped:
		var req abi.SleepRequest
		_ = json.Unmarshal(request, &req)
		h.mu.Lock()
		h.sleeps = append(h.sleeps, req.Seconds)
		h.mu.Unlock()
		return mustJSON(h.stopped())
	case abi.HostIsStopped:
		return mustJSON(h.stopped())
	}
	return nil
}

func badRequest(err error) *abi.HostError {
	return &abi.HostError{Code: 400, Reason: "BadRequest", Message: err.Error(), Origin: abi.OriginHost}
}

func (h *Host) stopped() abi.SleepResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sleeps) > h.StopAfter {
		return abi.SleepResponse{Stopped: true, Reason: h.StopReason}
	}
	return abi.SleepResponse{}
}

// kube checks a Kubernetes request against the manifest's permissions as
// the host does, then answers it with Kube or the object store.
func (h *Host) kube(req abi.KubeRequest) abi.KubeResponse {
	if !permitted(h.manifest.Permissions.Kubernetes, req) {
		return abi.KubeResponse{Error: &abi.HostError{Code: 403, Reason: "Forbidden", Origin: abi.OriginHost,
			Message: fmt.Sprintf("module %q did not declare permission to %s %s; add it to the module's permissions",
				h.manifest.Module.Name, checkedVerb(req.Verb), resourceName(req))}}
	}
	if h.Kube != nil {
		return h.Kube(req)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.store.serve(req)
}

// checkedVerb is the RBAC verb of a request: server-side apply is a patch.
func checkedVerb(v abi.KubeVerb) string {
	if v == abi.VerbApply {
		return string(abi.VerbPatch)
	}
	return string(v)
}

func resourceName(req abi.KubeRequest) string {
	name := req.Resource
	if req.Group != "" {
		name += "." + req.Group
	}
	if req.Subresource != "" {
		name += "/" + req.Subresource
	}
	return name
}

func permitted(perms []abi.KubePermission, req abi.KubeRequest) bool {
	resource := req.Resource
	if req.Subresource != "" {
		resource += "/" + req.Subresource
	}
	verb := checkedVerb(req.Verb)
	for _, p := range perms {
		if (p.Group == req.Group || p.Group == "*") && (p.Resource == resource || p.Resource == "*") &&
			(slices.Contains(p.Verbs, verb) || slices.Contains(p.Verbs, "*")) {
			return true
		}
	}
	return false
}

// SetIndex stores values under key in the index with id index, for index
// look-ups and for the requests' indices. The key is a string, nil (the
// null key), or anything else (a tuple as []any, a number), kept under its
// JSON text as the host keys it: kopf.IndexKey("ns", "x") and []any{"ns",
// "x"} are one key.
func (h *Host) SetIndex(index string, key any, values ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.indices == nil {
		h.indices = map[string]map[string][]any{}
	}
	if h.indices[index] == nil {
		h.indices[index] = map[string][]any{}
	}
	if _, isString := key.(string); !isString && key != nil {
		key = string(mustJSON(key)) // a tuple or number: its JSON text, as the host keys it
	}
	k := string(mustJSON(key))
	h.indices[index][k] = append(h.indices[index][k], values...)
}

func (h *Host) lookup(req abi.IndexLookupRequest) abi.IndexLookupResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	idx, ok := h.index(req.Index)
	if !ok {
		return abi.IndexLookupResponse{Values: []json.RawMessage{}, Error: &abi.HostError{Code: 404, Reason: "NotFound",
			Message: fmt.Sprintf("module %q has no index %q", h.manifest.Module.Name, req.Index), Origin: abi.OriginHost}}
	}
	if req.All {
		return abi.IndexLookupResponse{Values: []json.RawMessage{}, Index: indexObject(idx)}
	}
	var key any
	_ = json.Unmarshal(req.Key, &key)
	if _, isString := key.(string); !isString && key != nil {
		key = string(mustJSON(key)) // matched by its JSON text, as the host does
	}
	out := []json.RawMessage{}
	for _, v := range idx[string(mustJSON(key))] {
		out = append(out, mustJSON(v))
	}
	return abi.IndexLookupResponse{Values: out}
}

// indexJSON renders the indices as a request carries them: per index a JSON
// object from key (a string key as is, others as their JSON) to values.
// With LargeIndexes set, every index is carried as null, as the host
// carries indexes larger than its execution.indexInline setting.
func (h *Host) indexJSON() map[string]json.RawMessage {
	ids := map[string]bool{}
	for id := range h.indices {
		ids[id] = true
	}
	for id := range h.contributed {
		ids[id] = true
	}
	if len(ids) == 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	for id := range ids {
		if h.LargeIndexes {
			out[id] = json.RawMessage("null")
			continue
		}
		idx, _ := h.index(id)
		out[id] = indexObject(idx)
	}
	return out
}

// indexObject renders an index as requests carry it: a JSON object from
// key (a string key as is, others as their JSON) to values.
func indexObject(idx map[string][]any) json.RawMessage {
	obj := map[string][]any{}
	for k, vs := range idx {
		var key any
		_ = json.Unmarshal([]byte(k), &key)
		if s, ok := key.(string); ok {
			k = s
		}
		obj[k] = vs
	}
	return mustJSON(obj)
}

// Calls returns every host call so far, in order.
func (h *Host) Calls() []HostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

// Logs returns the log records written so far.
func (h *Host) Logs() []abi.LogRecord { return decoded[abi.LogRecord](h, abi.HostLog) }

// Events returns the Events posted so far.
func (h *Host) Events() []abi.EventRequest { return decoded[abi.EventRequest](h, abi.HostPostEvent) }

// KubeRequests returns the Kubernetes requests made so far, refused ones
// included.
func (h *Host) KubeRequests() []abi.KubeRequest {
	return decoded[abi.KubeRequest](h, abi.HostKubeRequest)
}

// Sleeps returns the seconds of each sleep_until_stopped call so far.
func (h *Host) Sleeps() []float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sleeps)
}

func decoded[T any](h *Host, fn string) []T {
	var out []T
	for _, c := range h.Calls() {
		if c.Func != fn {
			continue
		}
		var v T
		if err := json.Unmarshal(c.Request, &v); err == nil {
			out = append(out, v)
		}
	}
	return out
}
