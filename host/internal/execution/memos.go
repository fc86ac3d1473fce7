package execution

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Memos are Kopf's memos, kept in the host's memory and never persisted:
//
//   - one operator memo per module: what its activity handlers (startup,
//     cleanup, probe) left, read by all of them;
//   - one object memo per module and object, shared by every handler of
//     that module about that object, whatever its kind (changing, event,
//     timer, daemon, index, webhook) and their callback filters. Until a
//     handler changes it, an object's memo is its module's operator memo
//     (Kopf copies the operator memo when it first sees an object).
//
// A memo is a JSON document: a call gets the memo as it is when the call
// starts, and a response that carries one ([abi.Response.Memo]) changes
// it. When both are JSON objects only the members the handler changed,
// added or removed are applied to the memo as it is now, so that calls
// about one object that overlap (an index handler on the watch, a change
// handler, a daemon) do not undo each other's changes: Kopf's memo is one
// shared object whose attributes handlers set. Otherwise the response's
// memo replaces it. Object memos
// are dropped by [Executor.ForgetObject] when the object is gone; modules
// keep theirs across swaps of their versions.
type Memos struct {
	mu       sync.Mutex
	operator map[string]json.RawMessage
	objects  map[memoKey]map[string]json.RawMessage // by object, then module
}

// memoKey names one object. The version is left out: an object is the
// same whichever version of its resource a handler selects.
type memoKey struct {
	group, plural, namespace, name string
}

func newMemos() *Memos {
	return &Memos{operator: map[string]json.RawMessage{}, objects: map[memoKey]map[string]json.RawMessage{}}
}

func keyOfMemo(ref abi.ResourceRef, namespace, name string) memoKey {
	return memoKey{group: ref.Group, plural: ref.Plural, namespace: namespace, name: name}
}

// of is the memo a call of h about subj starts with (the operator memo for
// activities and calls about no object).
func (m *Memos) of(h *registry.Handler, subj *Subject) json.RawMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	if subj != nil && !h.Kind().IsActivity() {
		key := keyOfMemo(subj.Resource, subj.Object.GetNamespace(), subj.Object.GetName())
		if memo, ok := m.objects[key][h.Module]; ok {
			return memo
		}
	}
	return m.operator[h.Module]
}

// keep applies the memo a call of h about subj answered with (start is
// the memo the call got).
func (m *Memos) keep(h *registry.Handler, subj *Subject, start, memo json.RawMessage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if subj == nil || h.Kind().IsActivity() {
		m.operator[h.Module] = applyMemo(m.operator[h.Module], start, memo)
		return
	}
	key := keyOfMemo(subj.Resource, subj.Object.GetNamespace(), subj.Object.GetName())
	if m.objects[key] == nil {
		m.objects[key] = map[string]json.RawMessage{}
	}
	now, ok := m.objects[key][h.Module]
	if !ok {
		now = m.operator[h.Module]
	}
	m.objects[key][h.Module] = applyMemo(now, start, memo)
}

// applyMemo applies a handler's memo to the current one: the members that
// differ from the memo the handler started with (added, changed,
// removed), when all three are JSON objects (or absent); else the
// handler's memo as a whole.
func applyMemo(now, start, memo json.RawMessage) json.RawMessage {
	var cur, was, got map[string]json.RawMessage
	if json.Unmarshal(memo, &got) != nil || got == nil {
		return memo
	}
	if len(now) > 0 && (json.Unmarshal(now, &cur) != nil || cur == nil) {
		return memo
	}
	if len(start) > 0 && (json.Unmarshal(start, &was) != nil || was == nil) {
		return memo
	}
	if cur == nil {
		cur = map[string]json.RawMessage{}
	}
	changed := false
	for k, v := range got {
		if w, ok := was[k]; !ok || !bytes.Equal(w, v) {
			cur[k], changed = v, true
		}
	}
	for k := range was {
		if _, ok := got[k]; !ok {
			delete(cur, k)
			changed = true
		}
	}
	if !changed && len(now) > 0 {
		return now
	}
	out, err := json.Marshal(cur)
	if err != nil {
		return memo
	}
	return out
}

// forget drops the memos of every module about one object.
func (m *Memos) forget(ref abi.ResourceRef, namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, keyOfMemo(ref, namespace, name))
}

// Len is the number of objects with a memo of their own (for tests).
func (m *Memos) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objects)
}

// ForgetObject drops every module's memo about an object that is gone
// (Kopf keeps an object's memory until its DELETED event).
func (e *Executor) ForgetObject(ref abi.ResourceRef, namespace, name string) {
	e.memos.forget(ref, namespace, name)
}

// Memos are the executor's memos.
func (e *Executor) Memos() *Memos { return e.memos }

// memoFor fills in's memo from the memos when the caller left it unset.
func (e *Executor) memoFor(h *registry.Handler, in *Input) {
	if in.Memo == nil {
		in.Memo = e.memos.of(h, in.Subject)
	}
}

// keepMemo stores the memo of a call's response, unless the call's memo is
// ephemeral (a review of an object being created, a conversion) or the
// call was a callback filter's.
func (e *Executor) keepMemo(h *registry.Handler, in Input, resp *abi.Response) {
	if resp == nil || len(resp.Memo) == 0 || in.Filter || in.EphemeralMemo || in.Conversion != nil {
		return
	}
	e.memos.keep(h, in.Subject, in.Memo, resp.Memo)
}
