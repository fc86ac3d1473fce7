package indexing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Options configure an [Engine].
type Options struct {
	// Exec calls the index handlers. Required.
	Exec *execution.Executor
	// Inline is the largest encoded index, in bytes, that requests carry
	// whole (settings.Execution.IndexInline); larger ones are carried as
	// null and read through look-ups.
	Inline int
	// OnReady is called when a module's indexes become ready. Optional.
	OnReady func(module string)
	// Logger receives the engine's own logs. Default slog.Default().
	Logger *slog.Logger
}

// Engine keeps the indexes of every module; see the package
// documentation. It is safe for concurrent use.
type Engine struct {
	opts Options
	log  *slog.Logger

	mu   sync.RWMutex
	view view
}

// view is one registry with the index sets of its modules: replaced, never
// changed, by [Engine.Install], so that a call that began on one version
// of a module never writes into the indexes of the next.
type view struct {
	reg  *registry.Registry
	sets map[string]*set // by module
}

// set is the indexes of one version of one module.
type set struct {
	mu      sync.Mutex
	module  string
	indexes map[string]*state // by handler id
	ready   bool
	retired bool
}

// state is one index with its objects' retry states.
type state struct {
	ix *Index
	// failed holds the records of objects whose last call failed
	// temporarily (due again after its delay) or for good.
	failed map[string]persistence.Record
	// touched marks the objects indexed from watch events while the set is
	// being filled, so that [Engine.Rebuild] does not overwrite them with
	// an older state from the cache. Dropped once ready.
	touched map[string]bool
}

// New returns an engine with no modules.
func New(opts Options) *Engine {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Engine{opts: opts, log: opts.Logger, view: view{sets: map[string]*set{}}}
}

// Fill names the indexes of one module that [Engine.Install] started
// empty: fill them ([Engine.Rebuild], or the initial listing of new
// watches), then [Engine.MarkReady].
type Fill struct {
	// Module is the module's name.
	Module string
	// Resources are the resources its index handlers select.
	Resources []abi.ResourceRef
	set       *set
}

// Install switches to a registry. Modules for which keep reports true keep
// their indexes (an unchanged version); the indexes of the others start
// empty and not ready, and are returned to be filled. Modules without
// index handlers are always ready.
func (e *Engine) Install(reg *registry.Registry, keep func(module string) bool) []Fill {
	byModule := map[string]map[string]bool{}
	resources := map[string][]abi.ResourceRef{}
	var order []string
	for _, ref := range reg.Resources() {
		for _, h := range reg.Handlers(ref, abi.KindIndex) {
			if byModule[h.Module] == nil {
				byModule[h.Module] = map[string]bool{}
				order = append(order, h.Module)
			}
			byModule[h.Module][h.ID()] = true
			if n := len(resources[h.Module]); n == 0 || resources[h.Module][n-1] != ref {
				resources[h.Module] = append(resources[h.Module], ref)
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.view.sets
	next := view{reg: reg, sets: map[string]*set{}}
	var fills []Fill
	for _, module := range order {
		if s := old[module]; s != nil && keep != nil && keep(module) && sameIDs(s, byModule[module]) {
			next.sets[module] = s
			continue
		}
		s := &set{module: module, indexes: map[string]*state{}}
		for id := range byModule[module] {
			s.indexes[id] = &state{ix: NewIndex(), failed: map[string]persistence.Record{}, touched: map[string]bool{}}
		}
		next.sets[module] = s
		fills = append(fills, Fill{Module: module, Resources: resources[module], set: s})
	}
	for module, s := range old {
		if next.sets[module] != s {
			s.mu.Lock()
			s.retired = true
			s.mu.Unlock()
		}
	}
	e.view = next
	return fills
}

func sameIDs(s *set, ids map[string]bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.indexes) != len(ids) {
		return false
	}
	for id := range s.indexes {
		if !ids[id] {
			return false
		}
	}
	return true
}

func (e *Engine) current() view {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.view
}

// Ready reports whether the module's indexes are complete: always for a
// module without index handlers.
func (e *Engine) Ready(module string) bool {
	s := e.current().sets[module]
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// MarkReady says the indexes of f are filled: the module's resource
// handlers may run. Nothing happens if a later Install replaced them.
func (e *Engine) MarkReady(f Fill) {
	s := f.set
	s.mu.Lock()
	if s.retired || s.ready {
		s.mu.Unlock()
		return
	}
	s.ready = true
	n := 0
	for _, st := range s.indexes {
		st.touched = nil
		n += st.ix.Objects()
	}
	s.mu.Unlock()
	e.log.Info(fmt.Sprintf("Indexes of module %q are ready: %d object contributions.", f.Module, n), "module", f.Module)
	if e.opts.OnReady != nil {
		e.opts.OnReady(f.Module)
	}
}

// Observe indexes one watch event of an object of resource ref (status:
// the resource has the status subresource): the matching index handlers
// are called and their results replace the object's contributions; a
// deleted object's contributions are dropped.
func (e *Engine) Observe(ctx context.Context, ref abi.ResourceRef, status bool, obj *unstructured.Unstructured, deleted bool) {
	v := e.current()
	if v.reg == nil {
		return
	}
	handlers := v.reg.Handlers(ref, abi.KindIndex)
	if len(handlers) == 0 {
		return
	}
	if deleted {
		key := objectKey(obj)
		for _, h := range handlers {
			if s := v.sets[h.Module]; s != nil {
				s.update(h.ID(), key, false, func(st *state) {
					st.ix.Discard(key)
					delete(st.failed, key)
				})
			}
		}
		return
	}
	e.index(ctx, v, ref, status, obj, handlers, false)
}

// Rebuild indexes objects of resource ref from the watch cache into the
// indexes of f. Objects that a watch event indexed meanwhile are left as
// that event left them (their state is at least as new).
func (e *Engine) Rebuild(ctx context.Context, f Fill, ref abi.ResourceRef, status bool, objs []*unstructured.Unstructured) {
	v := e.current()
	if v.reg == nil || v.sets[f.Module] != f.set {
		return // replaced meanwhile
	}
	var handlers []*registry.Handler
	for _, h := range v.reg.Handlers(ref, abi.KindIndex) {
		if h.Module == f.Module {
			handlers = append(handlers, h)
		}
	}
	for _, obj := range objs {
		if ctx.Err() != nil {
			return
		}
		e.index(ctx, v, ref, status, obj, handlers, true)
	}
}

// index calls the handlers that match obj and folds their outcomes.
func (e *Engine) index(ctx context.Context, v view, ref abi.ResourceRef, status bool, obj *unstructured.Unstructured, handlers []*registry.Handler, rebuild bool) {
	subj := execution.NewSubject(ref, status, obj)
	exec := e.opts.Exec
	matched, err := v.reg.Matching(ref, abi.KindIndex, obj.Object, exec.When(ctx, subj, nil))
	if err != nil {
		e.log.Error(fmt.Sprintf("Indexing skipped: %v", err), subj.Attrs()...)
		return
	}
	isMatched := map[*registry.Handler]bool{}
	for _, h := range matched {
		isMatched[h] = true
	}
	key := objectKey(obj)
	for _, h := range handlers {
		s := v.sets[h.Module]
		if s == nil {
			continue
		}
		if !isMatched[h] {
			s.update(h.ID(), key, rebuild, func(st *state) {
				st.ix.Discard(key)
				delete(st.failed, key)
			})
			continue
		}
		rec, due := s.record(h.ID(), key, exec.Clock().Now())
		if !due {
			s.update(h.ID(), key, rebuild, func(st *state) { st.ix.Discard(key) })
			continue
		}
		r, err := exec.Call(ctx, h, execution.Input{Subject: subj, Record: rec}, execution.CallOptions{})
		var gone *execution.NotLoadedError
		switch {
		case errors.As(err, &gone):
			continue // swapped out meanwhile: its set is retired
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			e.log.Error(fmt.Sprintf("Handler '%s' not called: %v", h.ID(), err), subj.Attrs()...)
			continue
		}
		exec.Report(ctx, subj, h, r.Step, "")
		s.update(h.ID(), key, rebuild, func(st *state) { fold(st, key, r) })
	}
}

// fold applies one call's outcome to the object's contributions, as
// Kopf's indexers do.
func fold(st *state, key string, r execution.Result) {
	var ignored *execution.IgnoredError
	switch {
	case r.Step.Deliver && r.Response != nil:
		delete(st.failed, key)
		values, keep, err := Contributions(r.Response.Result)
		if err != nil || keep {
			return
		}
		st.ix.Replace(key, values)
	case errors.As(r.Step.Err, &ignored):
		delete(st.failed, key) // stale values stay
	default:
		st.ix.Discard(key)
		st.failed[key] = r.Step.Record
	}
}

// record returns an object's retry state for handler id and whether the
// handler is due (not failed for good, past its delay).
func (s *set) record(id, key string, now time.Time) (persistence.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.indexes[id]
	if st == nil {
		return persistence.Record{}, false
	}
	rec, failed := st.failed[key]
	switch {
	case !failed:
		return persistence.Record{}, true
	case rec.Failure:
		return rec, false
	}
	return rec, !now.Before(rec.Delayed)
}

// update runs fn on one index of the set under its lock, unless the set
// is retired or fn comes from a rebuild and a watch event got there first.
func (s *set) update(id, key string, rebuild bool, fn func(*state)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.indexes[id]
	if st == nil || s.retired {
		return
	}
	if st.touched != nil {
		if rebuild && st.touched[key] {
			return
		}
		if !rebuild {
			st.touched[key] = true
		}
	}
	fn(st)
}

func objectKey(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}
