package operator

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// moduleSpec is what a Module object asks for: its stable source, and
// optionally a canary with its share of the objects and a shadow.
type moduleSpec struct {
	source, canary, shadow string
	percent                int
}

// specOf reads a Module object's spec.
func specOf(obj *unstructured.Unstructured) (moduleSpec, error) {
	var s moduleSpec
	s.source, _, _ = unstructured.NestedString(obj.Object, "spec", "source")
	s.canary, _, _ = unstructured.NestedString(obj.Object, "spec", "canary", "source")
	s.shadow, _, _ = unstructured.NestedString(obj.Object, "spec", "shadow", "source")
	if p, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "canary", "percent"); found && err == nil {
		switch v := p.(type) {
		case int64:
			s.percent = int(v)
		case float64:
			s.percent = int(v)
		}
	}
	if _, found, _ := unstructured.NestedMap(obj.Object, "spec", "canary"); found && s.canary == "" {
		return s, fmt.Errorf("spec.canary has no source: name the canary's OCI reference, or remove spec.canary")
	}
	if s.percent < 0 || s.percent > 100 {
		return s, fmt.Errorf("spec.canary.percent is %d: give 0 to 100", s.percent)
	}
	return s, nil
}

// rolls reports whether the spec names a canary or a shadow.
func (s moduleSpec) rolls() bool { return s.canary != "" || s.shadow != "" }

// pinned reports whether every source is a digest (never polled).
func (s moduleSpec) pinned() bool {
	for _, src := range []string{s.source, s.canary, s.shadow} {
		if src != "" && !modules.Pinned(src) {
			return false
		}
	}
	return true
}

// loadedVersion is one loaded version of a Module's module.
type loadedVersion struct {
	mod            *wasmrt.Module
	source, digest string
}

// loadedModule is what a Module object has loaded: its spec and its
// versions, with their counters (kept while a version's digest stays).
type loadedModule struct {
	spec                   moduleSpec
	generation             int64
	stable, canary, shadow loadedVersion
	stableCalls            *rollout.Counters
	canaryCalls            *rollout.Counters
	shadowCalls            *rollout.ShadowCounters
}

// loadAll loads the versions want names, reusing those of prev whose
// digest is unchanged (a share change or a promotion loads nothing). On
// an error the versions it loaded are closed.
func (m *moduleResources) loadAll(ctx context.Context, name string, want moduleSpec, prev loadedModule) (loadedModule, error) {
	next := loadedModule{spec: want}
	var fresh []*wasmrt.Module
	load := func(role, source string) (loadedVersion, error) {
		if source == "" {
			return loadedVersion{}, nil
		}
		mod, digest, err := m.load(ctx, name, source)
		if err != nil {
			if role != rollout.Stable {
				err = fmt.Errorf("spec.%s: %w", role, err)
			}
			return loadedVersion{}, err
		}
		for _, v := range []loadedVersion{prev.stable, prev.canary, prev.shadow} {
			if v.mod != nil && v.digest == digest {
				mod.Close() // this version is loaded already
				return loadedVersion{mod: v.mod, source: source, digest: digest}, nil
			}
		}
		fresh = append(fresh, mod)
		return loadedVersion{mod: mod, source: source, digest: digest}, nil
	}
	var err error
	if next.stable, err = load(rollout.Stable, want.source); err == nil {
		if next.canary, err = load(rollout.Canary, want.canary); err == nil {
			next.shadow, err = load(rollout.Shadow, want.shadow)
		}
	}
	if err != nil {
		for _, mod := range fresh {
			mod.Close()
		}
		return loadedModule{}, err
	}
	next.stableCalls = keepCounters(prev.stable.digest, next.stable.digest, prev.stableCalls)
	next.canaryCalls = keepCounters(prev.canary.digest, next.canary.digest, prev.canaryCalls)
	next.shadowCalls = prev.shadowCalls
	if prev.shadow.digest != next.shadow.digest || next.shadowCalls == nil {
		next.shadowCalls = &rollout.ShadowCounters{}
	}
	return next, nil
}

// keepCounters keeps a version's counters while its digest stays.
func keepCounters(was, now string, c *rollout.Counters) *rollout.Counters {
	if c == nil || was != now {
		return &rollout.Counters{}
	}
	return c
}

// same reports whether l serves what prev serves: the same versions
// and share.
func (l loadedModule) same(prev loadedModule) bool {
	return l.stable.mod == prev.stable.mod && l.canary.mod == prev.canary.mod && l.shadow.mod == prev.shadow.mod &&
		(l.canary.mod == nil || l.spec.percent == prev.spec.percent)
}

// rollout is the operator's Rollout of l.
func (l loadedModule) rollout() reactor.Rollout {
	return reactor.Rollout{Canary: l.canary.mod, Percent: l.spec.percent, Shadow: l.shadow.mod,
		Stable: l.stableCalls, CanaryCounters: l.canaryCalls, ShadowCounters: l.shadowCalls}
}

// closeNew closes the versions of l that prev did not hold (a swap that
// failed).
func (l loadedModule) closeNew(prev loadedModule) {
	old := map[*wasmrt.Module]bool{prev.stable.mod: true, prev.canary.mod: true, prev.shadow.mod: true}
	for _, v := range []loadedVersion{l.stable, l.canary, l.shadow} {
		if v.mod != nil && !old[v.mod] {
			old[v.mod] = true
			v.mod.Close()
		}
	}
}

// rolloutStatus writes each version's figures into the Module's status
// (status.versions, status.shadow), or removes them when the Module has
// neither a canary nor a shadow.
func (m *moduleResources) rolloutStatus(ctx context.Context, name string, l loadedModule) {
	if !l.spec.rolls() {
		m.status(ctx, name, map[string]any{"versions": nil, "shadow": nil})
		return
	}
	module := l.stable.mod.Manifest().Module.Name
	objects := m.set.op.RolloutObjects(module)
	entry := func(role string, v loadedVersion, percent int, c *rollout.Counters) map[string]any {
		out := map[string]any{"role": role, "source": v.source, "digest": v.digest, "version": v.mod.Manifest().Module.Version,
			"percent": percent, "calls": c.Calls(), "errors": c.Errors()}
		if objects != nil {
			out["objects"] = objects[role]
		}
		return out
	}
	fields := map[string]any{"shadow": nil}
	if l.canary.mod != nil {
		fields["versions"] = []any{entry(rollout.Stable, l.stable, 100-l.spec.percent, l.stableCalls),
			entry(rollout.Canary, l.canary, l.spec.percent, l.canaryCalls)}
	} else {
		fields["versions"] = []any{entry(rollout.Stable, l.stable, 100, l.stableCalls)}
	}
	if v := l.shadow; v.mod != nil {
		c := l.shadowCalls
		fields["shadow"] = map[string]any{"source": v.source, "digest": v.digest, "version": v.mod.Manifest().Module.Version,
			"calls": c.Calls(), "errors": c.Errors(), "differences": c.Differences(), "skipped": c.Skipped(),
			"lastDifference": c.Last()}
	}
	m.status(ctx, name, fields)
}

// setLimits gives every version of the module the Module object's bounds
// (spec.limits): a canary or a shadow is bounded as the stable version is.
func (l loadedModule) setLimits(limits settings.ModuleLimits) {
	for _, v := range []loadedVersion{l.stable, l.canary, l.shadow} {
		if v.mod != nil {
			v.mod.SetLimits(limits)
		}
	}
}
