package reactor

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// This file serves canary and shadow versions of modules
// (docs/rollouts.md). The registry holds the union of a module's stable
// and canary handlers; every object is routed to one version by the hash
// of its UID (rollout.InCanary), and a cycle leaves out the handlers its
// object's version does not declare. Timers and daemons keep the version
// they started on; when a share change moves their object, they are
// stopped, and the object's cycles wait until they have (Spawner.Rebind),
// as the sharding hand-over waits for the objects it gives away.

// Rollout is a second (and third) version of a loaded module, by the
// module's name in [Operator.SwapRollouts].
type Rollout struct {
	// Canary handles Percent of the objects (nil: none). Its manifest
	// names the same module; handlers both versions declare must be
	// declared alike, and the two must serve the same index, webhook,
	// activity and probe handlers (the stable version serves those).
	Canary  *wasmrt.Module
	Percent int
	// Shadow is called after the serving version and compared, never
	// written (nil: none); see execution's shadow.
	Shadow *wasmrt.Module
	// Counters count each version's calls; the caller keeps them across
	// swaps (the Module resource's status reads them). Nil ones are made.
	Stable, CanaryCounters *rollout.Counters
	ShadowCounters         *rollout.ShadowCounters
}

// rolloutState is a Rollout as the operator serves it.
type rolloutState struct {
	Rollout
	// stableIDs and canaryIDs are the handlers each version declares.
	stableIDs, canaryIDs map[string]bool
}

// checkRollouts validates rollouts against the stable modules and
// returns them as served, with the manifests the registry is built from
// (the stable's, or the union of the stable's and the canary's handlers).
func checkRollouts(modules map[string]*wasmrt.Module, rollouts map[string]Rollout) (map[string]*rolloutState, map[string]abi.Manifest, error) {
	states := map[string]*rolloutState{}
	manifests := map[string]abi.Manifest{}
	for name, r := range rollouts {
		stable := modules[name]
		if stable == nil {
			return nil, nil, fmt.Errorf("reactor: a canary or shadow of module %q, which is not loaded", name)
		}
		for _, v := range []*wasmrt.Module{r.Canary, r.Shadow} {
			if v != nil && v.Manifest().Module.Name != name {
				return nil, nil, fmt.Errorf("reactor: a canary or shadow of module %q is module %q; a version must have its module's name", name, v.Manifest().Module.Name)
			}
		}
		if r.Percent < 0 || r.Percent > 100 {
			return nil, nil, fmt.Errorf("reactor: the canary of module %q has a share of %d%%; give 0 to 100", name, r.Percent)
		}
		if r.Stable == nil {
			r.Stable = &rollout.Counters{}
		}
		if r.CanaryCounters == nil {
			r.CanaryCounters = &rollout.Counters{}
		}
		if r.ShadowCounters == nil {
			r.ShadowCounters = &rollout.ShadowCounters{}
		}
		st := &rolloutState{Rollout: r, stableIDs: ids(stable.Manifest())}
		if r.Canary != nil {
			union, err := unionManifest(stable.Manifest(), r.Canary.Manifest())
			if err != nil {
				return nil, nil, fmt.Errorf("reactor: the canary of module %q: %w", name, err)
			}
			manifests[name] = union
			st.canaryIDs = ids(r.Canary.Manifest())
		}
		states[name] = st
	}
	return states, manifests, nil
}

func ids(m abi.Manifest) map[string]bool {
	out := map[string]bool{}
	for _, h := range m.Handlers {
		out[h.ID] = true
	}
	return out
}

// unionManifest is the stable manifest with the canary's own handlers
// added. A handler both declare must be declared alike, and the handlers
// the stable version serves for every object (indexes, webhooks,
// activities, probes) must be the same in both.
func unionManifest(stable, canary abi.Manifest) (abi.Manifest, error) {
	// A function may be declared under one id for several changing kinds.
	key := func(h abi.HandlerSpec) string { return h.ID + "\x00" + string(h.Kind) }
	byKey := map[string]abi.HandlerSpec{}
	for _, h := range stable.Handlers {
		byKey[key(h)] = h
	}
	union := stable
	union.Handlers = append([]abi.HandlerSpec(nil), stable.Handlers...)
	inCanary := map[string]bool{}
	for _, h := range canary.Handlers {
		inCanary[key(h)] = true
		prev, both := byKey[key(h)]
		switch {
		case both && !reflect.DeepEqual(prev, h):
			return abi.Manifest{}, fmt.Errorf("it declares handler '%s' otherwise than the stable version; give the changed handler another id, or roll it out whole", h.ID)
		case !both && stableServed(h.Kind):
			return abi.Manifest{}, fmt.Errorf("it adds the %s handler '%s', which only the stable version would serve; roll it out whole", h.Kind, h.ID)
		case !both:
			union.Handlers = append(union.Handlers, h)
		}
	}
	for _, h := range stable.Handlers {
		if !inCanary[key(h)] && stableServed(h.Kind) {
			return abi.Manifest{}, fmt.Errorf("it lacks the %s handler '%s', which the stable version serves for both; roll it out whole", h.Kind, h.ID)
		}
	}
	return union, nil
}

// stableServed reports whether handlers of this kind are served by the
// stable version for every object (execution's routed kinds are not).
func stableServed(k abi.HandlerKind) bool {
	return !(k.IsChanging() || k == abi.KindEvent || k == abi.KindTimer || k == abi.KindDaemon)
}

// rolloutOf returns the rollout of a module (nil when it has none).
func (o *Operator) rolloutOf(name string) *rolloutState {
	if m := o.rollouts.Load(); m != nil {
		return (*m)[name]
	}
	return nil
}

// route is the executor's RouteFunc: the version of h's module that
// handles the object with this UID, or the bound one.
func (o *Operator) route(h *registry.Handler, uid, bound string) execution.Version {
	stable := o.module(h.Module)
	r := o.rolloutOf(h.Module)
	if r == nil {
		return execution.Version{Module: stable, Declared: true}
	}
	role := bound
	if role == "" {
		role = o.roleOf(r, uid)
	}
	if role == rollout.Canary {
		if r.Canary == nil {
			return execution.Version{Role: role} // dropped: a bound worker stops
		}
		return execution.Version{Module: r.Canary, Role: role, Counters: r.CanaryCounters, Declared: r.canaryIDs[h.ID()]}
	}
	return execution.Version{Module: stable, Role: rollout.Stable, Counters: r.Stable, Declared: r.Canary == nil || r.stableIDs[h.ID()]}
}

// roleOf is the version that handles the object with this UID.
func (o *Operator) roleOf(r *rolloutState, uid string) string {
	if r.Canary != nil && rollout.InCanary(uid, r.Percent) {
		return rollout.Canary
	}
	return rollout.Stable
}

// shadowOf is the executor's Shadow.
func (o *Operator) shadowOf(name string) (execution.Module, *rollout.ShadowCounters) {
	if r := o.rolloutOf(name); r != nil && r.Shadow != nil {
		return r.Shadow, r.ShadowCounters
	}
	return nil, nil
}

// declared leaves out of handlers those that subj's version of their
// module does not declare.
func (o *Operator) declared(handlers []*registry.Handler, subj *execution.Subject) []*registry.Handler {
	if m := o.rollouts.Load(); m == nil || len(*m) == 0 {
		return handlers
	}
	out := handlers[:0:0]
	for _, h := range handlers {
		if o.exec.Declares(h, subj) {
			out = append(out, h)
		}
	}
	return out
}

// moving stops the object's timers and daemons that run on a version
// that no longer handles it and reports whether any of them still runs:
// the object's cycle waits then (the last one to stop queues it again).
// It is asked also without rollouts: workers bound to a canary that was
// just dropped or promoted must stop too.
func (o *Operator) moving(key objectKey, subj *execution.Subject) bool {
	k := spawning.Key{Resource: key.resource, Namespace: key.namespace, Name: key.name}
	return o.spawner.Rebind(k, func(h *registry.Handler, version string) bool {
		now := o.exec.Role(h, subj)
		return now == version || (now == "" && version == rollout.Stable) || (now == rollout.Stable && version == "")
	}) > 0
}

// RolloutObjects counts the watched objects each version of a module
// with a canary handles now (by role), and reports them as metrics.
func (o *Operator) RolloutObjects(name string) map[string]int {
	r := o.rolloutOf(name)
	if r == nil || r.Canary == nil {
		return nil
	}
	counts := map[string]int{rollout.Stable: 0, rollout.Canary: 0}
	o.mu.RLock()
	for _, s := range o.served {
		if s.watch == nil || !o.handles(name, s) {
			continue
		}
		eachCached(s.watch, func(_ string, obj *unstructured.Unstructured) {
			counts[o.roleOf(r, string(obj.GetUID()))]++
		})
	}
	o.mu.RUnlock()
	for role, n := range counts {
		metrics.RolloutObjects(name, role, n)
	}
	return counts
}

// handles reports whether a module has a handler of the served resource
// that handles objects (not only indexes or webhooks); o.mu is held.
func (o *Operator) handles(name string, s *served) bool {
	for _, h := range o.registry.Handlers(s.res.ResourceRef) {
		if h.Module == name && !stableServed(h.Kind()) {
			return true
		}
	}
	return false
}
