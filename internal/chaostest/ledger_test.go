package chaostest

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// callKey names what a handler call does once: create_fn and delete_fn
// once per object, update_fn once per version of the object (spec.step).
// A second call with the same key is a repeat.
type callKey struct {
	object, handler string
	step            int // update_fn's spec.step; -1 for the others
}

func (k callKey) String() string {
	if k.step < 0 {
		return k.object + "/" + k.handler
	}
	return fmt.Sprintf("%s/%s@%d", k.object, k.handler, k.step)
}

// call is one handler call, as the conformance guest logged it.
type call struct {
	key  callKey
	proc int // the host process that made it
	at   time.Time
}

// calls are the handler calls in a process's log records, in order.
func calls(proc int, recs []record) []call {
	var out []call
	for _, r := range recs {
		if r.Msg != "call" || r.Object.Name == "" || r.Handler == "" {
			continue
		}
		k := callKey{object: r.Object.Name, handler: r.Handler, step: -1}
		if r.Handler == "update_fn" && r.Step != nil {
			k.step = int(*r.Step)
		}
		out = append(out, call{key: k, proc: proc, at: r.Time})
	}
	return out
}

// stored reports whether the object (nil: it is gone) shows that the call
// succeeded, as the host itself would read it after a restart: create_fn
// by a diff-base or its progress record, update_fn by a diff-base of its
// version or a later one, delete_fn by the released finalizer or its
// progress record. A call that is not stored may run again.
func stored(k callKey, obj *unstructured.Unstructured) bool {
	if obj == nil {
		return true
	}
	switch k.handler {
	case "create_fn":
		return handledStep(obj) >= 0 || progressSucceeded(obj, k.handler)
	case "update_fn":
		return handledStep(obj) >= k.step
	case "delete_fn":
		return !finalized(obj) || progressSucceeded(obj, k.handler)
	}
	return false
}

// inFlight are the keys of a killed process's calls whose success was not
// stored on the objects when it died (snapshot: the objects by name, read
// after its death).
func inFlight(cs []call, snapshot map[string]*unstructured.Unstructured) map[callKey]bool {
	out := map[callKey]bool{}
	for _, c := range cs {
		if !stored(c.key, snapshot[c.key.object]) {
			out[c.key] = true
		}
	}
	return out
}

// audit is what the calls of every process say about repeats.
type audit struct {
	calls    int
	repeats  int      // calls of a key called before
	inFlight int      // keys in flight at the kills, summed over the kills
	unjust   []string // repeats not explained by a kill
}

// auditCalls checks every repeat against the kills: a key may be called
// again only by a later process, and only if the process of its previous
// call was killed with that call in flight. Each in-flight key explains one
// repeat at most, so repeats never exceed what was in flight.
// inFlightAt[p] is nil for a process that was not killed.
func auditCalls(all []call, inFlightAt []map[callKey]bool) audit {
	a := audit{calls: len(all)}
	for _, m := range inFlightAt {
		a.inFlight += len(m)
	}
	byKey := map[callKey][]call{}
	for _, c := range all {
		byKey[c.key] = append(byKey[c.key], c)
	}
	keys := make([]callKey, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		cs := byKey[k]
		for i := 1; i < len(cs); i++ {
			a.repeats++
			prev := cs[i-1]
			if prev.proc < cs[i].proc && prev.proc < len(inFlightAt) && inFlightAt[prev.proc][k] {
				continue
			}
			a.unjust = append(a.unjust, fmt.Sprintf("%s: called by host %d at %s, again by host %d at %s (not in flight at a kill)",
				k, prev.proc, prev.at.Format(time.StampMilli), cs[i].proc, cs[i].at.Format(time.StampMilli)))
		}
	}
	return a
}

// missing lists the keys in want that no call has.
func missing(all []call, want []callKey) []string {
	seen := map[callKey]bool{}
	for _, c := range all {
		seen[c.key] = true
	}
	var out []string
	for _, k := range want {
		if !seen[k] {
			out = append(out, k.String())
		}
	}
	return out
}

func TestAuditCalls(t *testing.T) {
	at := time.Unix(0, 0)
	c := func(obj, handler string, step, proc int) call {
		return call{key: callKey{object: obj, handler: handler, step: step}, proc: proc, at: at}
	}
	create := callKey{object: "a", handler: "create_fn", step: -1}
	tests := []struct {
		name      string
		calls     []call
		inFlight  []map[callKey]bool
		repeats   int
		unjust    int
		inFlightN int
	}{
		{name: "once each", calls: []call{c("a", "create_fn", -1, 0), c("a", "update_fn", 1, 0), c("a", "update_fn", 2, 1)},
			inFlight: []map[callKey]bool{{}, nil}},
		{name: "again after the kill that cut it", calls: []call{c("a", "create_fn", -1, 0), c("a", "create_fn", -1, 1)},
			inFlight: []map[callKey]bool{{create: true}, nil}, repeats: 1, inFlightN: 1},
		{name: "again although stored", calls: []call{c("a", "create_fn", -1, 0), c("a", "create_fn", -1, 1)},
			inFlight: []map[callKey]bool{{}, nil}, repeats: 1, unjust: 1},
		{name: "again in the same process", calls: []call{c("a", "create_fn", -1, 0), c("a", "create_fn", -1, 0)},
			inFlight: []map[callKey]bool{{create: true}}, repeats: 1, unjust: 1, inFlightN: 1},
		{name: "one kill explains one repeat", calls: []call{c("a", "create_fn", -1, 0), c("a", "create_fn", -1, 1), c("a", "create_fn", -1, 2)},
			inFlight: []map[callKey]bool{{create: true}, {}, nil}, repeats: 2, unjust: 1, inFlightN: 1},
		{name: "another version is no repeat", calls: []call{c("a", "update_fn", 1, 0), c("a", "update_fn", 2, 1)},
			inFlight: []map[callKey]bool{{}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := auditCalls(tt.calls, tt.inFlight)
			if a.repeats != tt.repeats || len(a.unjust) != tt.unjust || a.inFlight != tt.inFlightN {
				t.Errorf("repeats %d, unjustified %v, in flight %d; want %d, %d, %d", a.repeats, a.unjust, a.inFlight, tt.repeats, tt.unjust, tt.inFlightN)
			}
		})
	}
}

func TestStoredAndInFlight(t *testing.T) {
	obj := func(annotations map[string]any, finalizers []any, diffBase string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}
		if annotations != nil {
			_ = unstructured.SetNestedField(u.Object, annotations, "metadata", "annotations")
		}
		if finalizers != nil {
			_ = unstructured.SetNestedSlice(u.Object, finalizers, "metadata", "finalizers")
		}
		if diffBase != "" {
			_ = unstructured.SetNestedField(u.Object, diffBase, "status", "kopf", diffBaseKey)
		}
		return u
	}
	create := callKey{object: "a", handler: "create_fn", step: -1}
	update2 := callKey{object: "a", handler: "update_fn", step: 2}
	del := callKey{object: "a", handler: "delete_fn", step: -1}
	fin := []any{finalizer}
	tests := []struct {
		name string
		key  callKey
		obj  *unstructured.Unstructured
		want bool
	}{
		{"gone", create, nil, true},
		{"create without diff-base", create, obj(nil, fin, ""), false},
		{"create with its progress", create, obj(map[string]any{progressPrefix + "create_fn": `{"success":true}`}, fin, ""), true},
		{"create with a failed attempt", create, obj(map[string]any{progressPrefix + "create_fn": `{"success":false,"retries":1}`}, fin, ""), false},
		{"create with a diff-base", create, obj(nil, fin, `{"spec":{"step":0}}`), true},
		{"create with the annotation's diff-base", create, obj(map[string]any{progressPrefix + diffBaseKey: `{"spec":{"step":0}}`}, fin, ""), true},
		{"update of an older version handled", update2, obj(nil, fin, `{"spec":{"step":1}}`), false},
		{"update handled", update2, obj(nil, fin, `{"spec":{"step":2}}`), true},
		{"update superseded", update2, obj(nil, fin, `{"spec":{"step":3}}`), true},
		{"delete holding the finalizer", del, obj(nil, fin, `{"spec":{"step":2}}`), false},
		{"delete released", del, obj(nil, nil, `{"spec":{"step":2}}`), true},
		{"delete with its progress", del, obj(map[string]any{progressPrefix + "delete_fn": `{"success":true}`}, fin, ""), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stored(tt.key, tt.obj); got != tt.want {
				t.Errorf("stored(%s) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
	// Of a killed process's calls, those not stored are in flight.
	cs := []call{{key: create}, {key: update2}}
	got := inFlight(cs, map[string]*unstructured.Unstructured{"a": obj(nil, fin, `{"spec":{"step":1}}`)})
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	if want := []string{"a/update_fn@2"}; !slices.Equal(keys, want) {
		t.Errorf("in flight: %v, want %v", keys, want)
	}
}

// exactlyOnce fails t unless every key of want was called exactly once and
// nothing else was called.
func exactlyOnce(t testing.TB, all []call, want []callKey) {
	t.Helper()
	n := map[callKey]int{}
	for _, c := range all {
		n[c.key]++
	}
	for _, k := range want {
		if n[k] != 1 {
			t.Errorf("%s called %d times, want once", k, n[k])
		}
		delete(n, k)
	}
	for k, count := range n {
		t.Errorf("%s called %d times, which no change asked for", k, count)
	}
}
