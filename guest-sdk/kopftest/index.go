package kopftest

import (
	"encoding/json"
	"slices"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// IndexObjects runs the index handler id on each object, as the host does
// for every object of its resource, and keeps the result in the index
// named id by Kopf's rules (an object its filters leave out contributes
// nothing): a map contributes each of its keys, any other
// value is contributed under the key null, and nil keeps the object's
// previous contributions; a map replaces them. Errors as the host's: an
// arbitrary error in the ignored errors mode (the default of index
// handlers) keeps the object's previous values, any other failure drops
// them. Handlers called afterwards see the index in their
// requests and through look-ups, beside the values seeded with
// [Host.SetIndex].
func (h *Host) IndexObjects(id string, objs ...map[string]any) {
	h.t.Helper()
	ignored := h.Spec(id).Options.Errors == "" || h.Spec(id).Options.Errors == abi.ErrorsIgnored
	for _, obj := range objs {
		meta, _ := obj["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		key := memoKey(ns, name)
		if h.WhyNot(id, obj, nil) != "" { // no longer matches its filters
			h.mu.Lock()
			delete(h.contributed[id], key)
			h.mu.Unlock()
			continue
		}
		res := h.Run(id, obj, nil)
		h.mu.Lock()
		if h.contributed == nil {
			h.contributed = map[string]map[string]map[string]any{}
		}
		if h.contributed[id] == nil {
			h.contributed[id] = map[string]map[string]any{}
		}
		switch {
		case res.Response.Outcome.Status == abi.OutcomeError && ignored:
		case res.Err != nil:
			delete(h.contributed[id], key)
		case len(res.Response.Result) == 0 || string(res.Response.Result) == "null":
		default:
			var v any
			_ = json.Unmarshal(res.Response.Result, &v)
			values := map[string]any{}
			if m, ok := v.(map[string]any); ok {
				for k, x := range m {
					values[string(mustJSON(k))] = x
				}
			} else {
				values["null"] = v
			}
			h.contributed[id][key] = values
		}
		h.mu.Unlock()
	}
}

// ForgetObject drops what an object contributed to every index (as the
// host does when it is deleted) and its memo.
func (h *Host) ForgetObject(namespace, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, byObject := range h.contributed {
		delete(byObject, memoKey(namespace, name))
	}
	delete(h.memos, memoKey(namespace, name))
}

// index is index id as handlers see it: the seeded values, then the
// objects' contributions ordered by object, by key as JSON text. h.mu is
// held.
func (h *Host) index(id string) (map[string][]any, bool) {
	seeded, ok := h.indices[id]
	byObject, ok2 := h.contributed[id]
	if !ok && !ok2 {
		return nil, false
	}
	out := map[string][]any{}
	for k, vs := range seeded {
		out[k] = append(out[k], vs...)
	}
	objs := make([]string, 0, len(byObject))
	for obj := range byObject {
		objs = append(objs, obj)
	}
	slices.Sort(objs)
	for _, obj := range objs {
		for k, v := range byObject[obj] {
			out[k] = append(out[k], v)
		}
	}
	return out, true
}

// SetMemo seeds the memo of an object (namespace and name empty: the
// operator memo, which activity handlers get and objects start with).
func (h *Host) SetMemo(namespace, name string, memo map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.memos[memoKey(namespace, name)] = mustJSON(memo)
}
