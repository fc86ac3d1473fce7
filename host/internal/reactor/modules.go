package reactor

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// install makes mods the operator's module set: it builds the registry from
// their manifests, resolving every resource selector through discovery, and
// records the resources to watch. A handler whose resource the cluster does
// not serve is logged and left out. o.mu is held by the caller (or o is not
// running yet).
func (o *Operator) install(ctx context.Context, mods []*wasmrt.Module, rollouts map[string]Rollout) error {
	modules, states, reg, resolved, err := o.build(ctx, mods, rollouts)
	if err != nil {
		return err
	}
	o.modules, o.registry = modules, reg
	o.current.Store(&modules)
	o.budget(modules, states)
	o.rollouts.Store(&states)
	o.reg.Store(reg)
	o.fills = o.indexing.Install(reg, nil)
	for _, ref := range watched(reg) {
		key := refString(ref)
		if o.served[key] == nil {
			o.served[key] = &served{res: resolved[key]}
		}
	}
	return nil
}

// build checks a module set and its rollouts and builds its registry.
func (o *Operator) build(ctx context.Context, mods []*wasmrt.Module, rollouts map[string]Rollout) (map[string]*wasmrt.Module, map[string]*rolloutState, *registry.Registry, map[string]kube.Resource, error) {
	modules := map[string]*wasmrt.Module{}
	for _, m := range mods {
		// Handlers name their module by its manifest's name.
		name := m.Manifest().Module.Name
		if _, dup := modules[name]; dup {
			return nil, nil, nil, nil, fmt.Errorf("reactor: two modules are named %q in their manifests; rename one", name)
		}
		modules[name] = m
	}
	states, unions, err := checkRollouts(modules, rollouts)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var manifests []abi.Manifest
	for _, m := range mods {
		man := m.Manifest()
		if union, ok := unions[man.Module.Name]; ok {
			man = union
		}
		manifests = append(manifests, man)
	}
	resolved := map[string]kube.Resource{}
	reg, err := registry.NewAllPicked(manifests, func(sel abi.ResourceSelector) ([]abi.ResourceRef, error) {
		all, err := o.kube.ResolveAll(ctx, sel)
		if err != nil {
			return nil, err
		}
		refs := make([]abi.ResourceRef, len(all))
		for i, res := range all {
			resolved[res.String()] = res
			refs[i] = res.ResourceRef
		}
		return refs, nil
	}, func(module string, spec abi.HandlerSpec, refs []abi.ResourceRef) ([]abi.ResourceRef, error) {
		return pick(ctx, modules[module], spec, refs, resolved)
	})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("reactor: %w", err)
	}
	o.scan.built(mods, rollouts)
	o.logUnresolved(reg)
	o.warnUnserved(manifests)
	return modules, states, reg, resolved, nil
}

// pick asks mod which of the candidates (refs, resolved in resolved) the
// callable selector of its handler spec takes: Kopf's fn(resource) ->
// bool, asked once per build (at start and whenever discovery changes).
func pick(ctx context.Context, mod *wasmrt.Module, spec abi.HandlerSpec, refs []abi.ResourceRef, resolved map[string]kube.Resource) ([]abi.ResourceRef, error) {
	infos := make([]abi.ResourceInfo, len(refs))
	for i, ref := range refs {
		res := resolved[refString(ref)]
		infos[i] = abi.ResourceInfo{Group: ref.Group, Version: ref.Version, Plural: ref.Plural, Kind: ref.Kind,
			Singular: res.Singular, ShortNames: res.ShortNames, Categories: res.Categories, Namespaced: ref.Namespaced,
			Preferred: res.Preferred, Verbs: res.Verbs}
		if res.Status {
			infos[i].Subresources = []string{"status"}
		}
	}
	req, err := execution.SelectRequest(spec, infos)
	if err != nil {
		return nil, err
	}
	resp, err := mod.Handle(ctx, req, nil)
	if err != nil {
		return nil, fmt.Errorf("the callable selector of handler '%s': %w", spec.ID, err)
	}
	picked, err := execution.Selected(spec, resp, len(refs))
	if err != nil {
		return nil, err
	}
	var out []abi.ResourceRef
	for i, ok := range picked {
		if ok {
			out = append(out, refs[i])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("its callable selector took none of the %d resources the cluster serves: %w", len(refs), kube.ErrNotServed)
	}
	return out, nil
}

// unserved are the handler kinds a module may declare (the ABI has them
// all) that this host does not serve yet, with what the author sees.
var unserved = map[abi.HandlerKind]string{}

// warnUnserved logs one warning per declared handler of a kind the host
// does not serve: a module loads, but never silently loses a handler.
func (o *Operator) warnUnserved(manifests []abi.Manifest) {
	for _, m := range manifests {
		for _, h := range m.Handlers {
			var whys []string
			if why, ok := unserved[h.Kind]; ok {
				whys = append(whys, why)
			}
			for _, why := range append(whys, unservedOptions(h)...) {
				if o.scan.first("unserved", m.Module.Name, h.ID, why) {
					o.log.Warn(fmt.Sprintf("Handler '%s' of module %q: %s.", h.ID, m.Module.Name, why),
						"module", m.Module.Name, "handler", h.ID, "kind", string(h.Kind))
				}
			}
		}
	}
}

// watch starts the watch of one served resource; o.mu is held.
func (o *Operator) watch(ctx context.Context, key string, s *served) error {
	w, err := o.kube.Watch(ctx, s.res, o.opts.Namespaces, o.eventHandler(key))
	if err != nil {
		return fmt.Errorf("reactor: watch %s: %w", key, err)
	}
	s.watch = w
	o.log.Info("watching", "resource", key, "namespaces", o.opts.Namespaces.String())
	return nil
}

// Swap switches the operator to another set of modules — a new version of
// a module, a module added or removed — between processing cycles: it
// waits for the cycles in flight (which finish on the old versions), then
// every later cycle runs on the new set. No event is lost (the watches go
// on; resources no longer handled stop being watched, new ones start) and
// no object is handled twice (progress is on the objects). As Kopf does
// after a restart, objects are not created again, but resume handlers run
// for every object; removed handlers are no longer called. Timers and
// daemons of changed modules restart on the new version. Old modules that
// are not in the new set are closed once their calls have finished.
func (o *Operator) Swap(ctx context.Context, mods []*wasmrt.Module) error {
	return o.swap(ctx, mods, nil, true)
}

// SwapRollouts is [Operator.Swap] with canary and shadow versions of
// modules, by module name (rollouts.go). A changed share moves objects
// between versions without a moment when two handle one: the cycles in
// flight finish first, as in any swap, and a moved object's timers and
// daemons stop before its new version handles it.
func (o *Operator) SwapRollouts(ctx context.Context, mods []*wasmrt.Module, rollouts map[string]Rollout) error {
	return o.swap(ctx, mods, rollouts, true)
}

// swap is SwapRollouts, and with resume false and no mods a rescan
// (scanning.go): the current modules, their selectors resolved again,
// objects not resumed.
func (o *Operator) swap(ctx context.Context, mods []*wasmrt.Module, rollouts map[string]Rollout, resume bool) error {
	o.scan.swapping.Lock()
	defer o.scan.swapping.Unlock()
	if resume {
		o.scan.forget()
	}
	if mods == nil {
		// A rescan: the modules as the last swap left them, read under the
		// lock so that a swap racing it is not undone.
		mods, rollouts = o.scan.modules()
	}
	modules, states, reg, resolved, err := o.build(ctx, mods, rollouts)
	if err != nil {
		return err
	}
	if !resume && o.unchanged(reg) {
		return nil // a rescan that found what is served already
	}
	o.mu.Lock()
	old := o.modules
	oldStates := *o.rollouts.Load()
	o.modules, o.registry = modules, reg
	o.current.Store(&modules)
	o.budget(modules, states)
	o.rollouts.Store(&states)
	o.reg.Store(reg)
	// The indexes of new and changed modules are rebuilt before their
	// resource handlers run again (indexes.go).
	fills := o.indexing.Install(reg, func(name string) bool { return old[name] != nil && old[name] == modules[name] })
	runCtx := o.runCtx
	wanted := map[string]bool{}
	var started []string
	for _, ref := range watched(reg) {
		key := refString(ref)
		wanted[key] = true
		if o.served[key] == nil {
			s := &served{res: resolved[key]}
			o.served[key] = s
			if o.runCtx != nil {
				if err := o.watch(o.runCtx, key, s); err != nil {
					o.log.Error(err.Error()) // not served; a later swap tries again
					delete(o.served, key)
					continue
				}
			}
			started = append(started, key)
		}
	}
	// Dropped watches stop after the lock is released: stopping waits for
	// their event handlers, which wait for the lock.
	var dropped []*kube.Watch
	var gone []string
	for key, s := range o.served {
		if !wanted[key] {
			gone = append(gone, key)
			delete(o.served, key)
			if s.watch != nil {
				dropped = append(dropped, s.watch)
			}
		}
	}
	var changed []string
	for name, m := range old {
		if modules[name] != m || versionsChanged(oldStates[name], states[name]) {
			changed = append(changed, name)
		}
	}
	o.spawner.Reload(slices.Collect(maps.Keys(modules)), changed)
	var keys []objectKey
	if resume {
		keys = o.mem.resumeAll()
	}
	o.mu.Unlock()
	for _, w := range dropped {
		w.Stop()
	}
	if runCtx != nil {
		fresh := map[string]bool{}
		for _, key := range started {
			fresh[key] = true
		}
		o.fillIndexes(runCtx, fills, fresh)
	} else {
		o.mu.Lock()
		o.fills = append(o.fills, fills...)
		o.mu.Unlock()
	}

	switch {
	case resume:
		o.log.Info("modules swapped", "modules", slices.Sorted(maps.Keys(modules)), "changed", changed, "new resources", started)
	case len(started) > 0 || len(gone) > 0:
		o.log.Info("resources rescanned: watching the resources that appeared, no longer those that went",
			"new resources", started, "gone resources", gone)
	}
	for _, key := range keys {
		o.queue.Add(key)
	}
	if runCtx != nil && o.admission != nil {
		// The server starts with the first webhook handler; the managed
		// configurations follow the handlers.
		if err := o.admission.Update(runCtx); err != nil {
			o.log.Error(err.Error())
		}
	}
	for _, m := range retired(old, oldStates, modules, states) {
		go m.Close() // waits for its calls in flight
	}
	return nil
}

// versionsChanged reports whether a module's canary or shadow was
// replaced (not merely its share changed): its timers and daemons restart.
func versionsChanged(was, now *rolloutState) bool {
	var a, b Rollout
	if was != nil {
		a = was.Rollout
	}
	if now != nil {
		b = now.Rollout
	}
	return a.Canary != b.Canary || a.Shadow != b.Shadow
}

// retired are the versions the old set served (stable, canary, shadow)
// that the new one serves in no role: they are closed once their calls
// have finished. A promoted canary or a demoted stable version is kept.
func retired(was map[string]*wasmrt.Module, wasOuts map[string]*rolloutState, now map[string]*wasmrt.Module, nowOuts map[string]*rolloutState) []*wasmrt.Module {
	serving := map[*wasmrt.Module]bool{}
	for _, m := range all(now, nowOuts) {
		serving[m] = true
	}
	var out []*wasmrt.Module
	for _, m := range all(was, wasOuts) {
		if !serving[m] {
			out = append(out, m)
			serving[m] = true // once
		}
	}
	return out
}

// all are the modules of a set and its rollouts.
func all(mods map[string]*wasmrt.Module, outs map[string]*rolloutState) []*wasmrt.Module {
	var out []*wasmrt.Module
	for _, m := range mods {
		out = append(out, m)
	}
	for _, r := range outs {
		for _, m := range []*wasmrt.Module{r.Canary, r.Shadow} {
			if m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// watched are the resources whose objects the operator watches: those with
// a handler other than a webhook (admission and conversion handlers get
// their objects in the reviews).
func watched(reg *registry.Registry) []abi.ResourceRef {
	var out []abi.ResourceRef
	for _, ref := range reg.Resources() {
		for _, h := range reg.Handlers(ref) {
			if !h.Kind().IsWebhook() && h.Kind() != abi.KindConvert {
				out = append(out, ref)
				break
			}
		}
	}
	return out
}

// budget bounds the memory of each module's instances by
// settings.Isolation.MemoryBytes, unless its Module resource set its own.
func (o *Operator) budget(modules map[string]*wasmrt.Module, rollouts map[string]*rolloutState) {
	all := slices.Collect(maps.Values(modules))
	for _, r := range rollouts {
		for _, m := range []*wasmrt.Module{r.Canary, r.Shadow} {
			if m != nil {
				all = append(all, m) // a canary or shadow version has a budget of its own
			}
		}
	}
	for _, m := range all {
		if _, own := m.Limits(); !own {
			m.SetMemoryBudget(o.opts.Settings.Isolation.MemoryBytes)
		}
	}
}
