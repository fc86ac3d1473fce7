package kopftest

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Request builds the request that the host would send to handler id about
// obj, with old as the previous state (nil for none). It fills the kind,
// reason, resource, body, name, namespace, uid, param, the object's memo
// and the indices; for changing handlers old and new are essences (the
// object without status and with only labels and annotations of its
// metadata), for field handlers the field's values, for webhooks the
// bodies, with a diff between them. Edit the result before [Host.Call] to
// test retries, runtimes, dry runs and the like.
func (h *Host) Request(id string, obj, old map[string]any) *abi.Request {
	h.t.Helper()
	spec := h.Spec(id)
	req := &abi.Request{Handler: id, Kind: spec.Kind, Param: spec.Options.Param, Started: time.Now().UTC()}
	h.mu.Lock()
	req.Indices = h.indexJSON()
	h.mu.Unlock()
	if spec.Kind.IsActivity() {
		req.Activity = spec.Kind
		h.mu.Lock()
		req.Memo = h.memos[memoKey("", "")] // the operator memo
		h.mu.Unlock()
		return req
	}
	if obj == nil {
		obj = old
	}
	meta, _ := obj["metadata"].(map[string]any)
	req.Name, _ = meta["name"].(string)
	req.Namespace, _ = meta["namespace"].(string)
	req.UID, _ = meta["uid"].(string)
	req.Body = mustJSON(obj)
	req.Resource = resourceRef(spec.Resource, obj)
	h.mu.Lock()
	req.Memo = h.memos[memoKey(req.Namespace, req.Name)]
	if req.Memo == nil {
		req.Memo = h.memos[memoKey("", "")] // the operator memo, until the object has its own
	}
	h.mu.Unlock()
	h.fillCause(req, spec, obj, old)
	return req
}

func (h *Host) fillCause(req *abi.Request, spec abi.HandlerSpec, obj, old map[string]any) {
	switch {
	case spec.Kind.IsChanging():
		req.Reason = reason(spec.Kind, old)
		var before, after any = essence(old, spec.Filters.Field), essence(obj, spec.Filters.Field)
		if old == nil {
			before = nil
		}
		if f := spec.Filters.Field; f != "" {
			before, after = fieldValue(before, f), fieldValue(after, f)
		}
		req.Old, req.New = jsonOrNil(before), jsonOrNil(after)
		req.Diff = diff(nil, before, after)
	case spec.Kind == abi.KindEvent:
		typ := "ADDED"
		if old != nil {
			typ = "MODIFIED"
		}
		req.Event = &abi.WatchEvent{Type: typ, Object: req.Body}
	case spec.Kind.IsWebhook():
		op := "CREATE"
		if old != nil {
			op = "UPDATE"
			req.Old = mustJSON(old)
		}
		req.New = req.Body
		req.Diff = diff(nil, old, obj)
		req.Admission = &abi.AdmissionRequest{UID: "kopftest-" + req.Name, Operation: op,
			UserInfo: json.RawMessage(`{"username":"kopftest"}`)}
	}
}

func reason(kind abi.HandlerKind, old map[string]any) abi.Reason {
	switch kind {
	case abi.KindCreate:
		return abi.ReasonCreate
	case abi.KindUpdate:
		return abi.ReasonUpdate
	case abi.KindDelete:
		return abi.ReasonDelete
	case abi.KindResume:
		return abi.ReasonResume
	}
	if old == nil {
		return abi.ReasonCreate
	}
	return abi.ReasonUpdate
}

func resourceRef(sel *abi.ResourceSelector, obj map[string]any) *abi.ResourceRef {
	ref := &abi.ResourceRef{Plural: sel.Name, Group: sel.Group, Version: sel.Version}
	if apiVersion, _ := obj["apiVersion"].(string); apiVersion != "" {
		i := strings.LastIndexByte(apiVersion, '/')
		ref.Group, ref.Version = apiVersion[:max(i, 0)], apiVersion[i+1:]
	}
	ref.Kind, _ = obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	ref.Namespaced = meta["namespace"] != nil
	return ref
}

func memoKey(namespace, name string) string { return namespace + "/" + name }

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("kopftest: " + err.Error())
	}
	return raw
}

func jsonOrNil(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	return mustJSON(v)
}
