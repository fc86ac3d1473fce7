package operator

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// moduleSet is what a running host serves: the modules of its arguments
// (files and OCI references, which the reloader watches) and the modules
// that Module resources name. Every change reaches the operator as one swap
// between processing cycles; a swap that fails leaves the set as it was.
type moduleSet struct {
	mu    sync.Mutex
	op    *reactor.Operator
	args  []*wasmrt.Module
	named map[string]*wasmrt.Module // by Module resource name
	// argsOuts are the canary and shadow versions of run's flags, by
	// module name; outs those of Module resources, by resource name.
	argsOuts map[string]reactor.Rollout
	outs     map[string]reactor.Rollout
	// resources serve the Module objects (nil without
	// Options.ModuleResources); read by ready.
	resources atomic.Pointer[moduleResources]
	// served is the set the operator serves now, for the metrics.
	served map[*wasmrt.Module]bool
}

func newModuleSet(op *reactor.Operator, args []*wasmrt.Module, argsOuts map[string]reactor.Rollout) *moduleSet {
	return &moduleSet{op: op, args: args, named: map[string]*wasmrt.Module{}, argsOuts: argsOuts,
		outs: map[string]reactor.Rollout{}, served: reportSwap(nil, append(slices.Clone(args), versions(argsOuts)...))}
}

// setArgs replaces the modules of the arguments.
func (s *moduleSet) setArgs(ctx context.Context, mods []*wasmrt.Module) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.args
	s.args = mods
	if err := s.swap(ctx); err != nil {
		s.args = prev
		return err
	}
	return nil
}

// setNamed serves mod, with the canary and shadow versions of out, for
// the Module resource name (mod nil: unloads it).
func (s *moduleSet) setNamed(ctx context.Context, name string, mod *wasmrt.Module, out reactor.Rollout) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, had := s.named[name]
	prevOut, hadOut := s.outs[name]
	delete(s.outs, name)
	if mod == nil {
		delete(s.named, name)
	} else {
		s.named[name] = mod
		if out.Canary != nil || out.Shadow != nil {
			s.outs[name] = out
		}
	}
	if err := s.swap(ctx); err != nil {
		delete(s.named, name)
		delete(s.outs, name)
		if had {
			s.named[name] = prev
		}
		if hadOut {
			s.outs[name] = prevOut
		}
		return err
	}
	return nil
}

// rollouts are the canary and shadow versions of the whole set, by
// module name; s.mu is held.
func (s *moduleSet) rollouts() map[string]reactor.Rollout {
	out := map[string]reactor.Rollout{}
	for name, r := range s.argsOuts {
		out[name] = r
	}
	for resource, r := range s.outs {
		out[s.named[resource].Manifest().Module.Name] = r
	}
	return out
}

// versions are the canary and shadow modules of rollouts.
func versions(rollouts map[string]reactor.Rollout) []*wasmrt.Module {
	var out []*wasmrt.Module
	for _, r := range rollouts {
		for _, m := range []*wasmrt.Module{r.Canary, r.Shadow} {
			if m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// swap hands the whole set to the operator; s.mu is held.
func (s *moduleSet) swap(ctx context.Context) error {
	all := slices.Clone(s.args)
	for _, name := range slices.Sorted(maps.Keys(s.named)) {
		all = append(all, s.named[name])
	}
	outs := s.rollouts()
	if err := s.op.SwapRollouts(ctx, all, outs); err != nil {
		return err
	}
	s.served = reportSwap(s.served, append(all, versions(outs)...))
	return nil
}

// stats are the instance figures of the modules served now.
func (s *moduleSet) stats() []metrics.ModuleStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metrics.ModuleStats
	for m := range s.served {
		st := m.Stats()
		out = append(out, metrics.ModuleStats{Module: m.Manifest().Module.Name, Instances: st.Live, MemoryBytes: st.MemoryBytes, Recycled: st.Recycled,
			BudgetBytes: st.BudgetBytes, BudgetHits: st.BudgetHits})
	}
	return out
}

// setResources records the Module resources' server, for ready.
func (s *moduleSet) setResources(m *moduleResources) { s.resources.Store(m) }

// ready says whether every module has loaded: the arguments' are before
// the operator starts; those of Module resources once each listed object
// has been served.
func (s *moduleSet) ready() error {
	if m := s.resources.Load(); m != nil {
		return m.ready()
	}
	return nil
}

// reportSwap reports the modules of now that were not in before (loaded,
// and swapped in when before was not empty) and returns now as a set.
func reportSwap(before map[*wasmrt.Module]bool, now []*wasmrt.Module) map[*wasmrt.Module]bool {
	set := make(map[*wasmrt.Module]bool, len(now))
	for _, m := range now {
		set[m] = true
		if !before[m] {
			name := m.Manifest().Module.Name
			metrics.ModuleLoaded(name)
			if before != nil {
				metrics.ModuleSwapped(name)
			}
		}
	}
	return set
}
