package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/oci"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// moduleResource is the Module resource: a module that every host run with
// Options.ModuleResources serves, named by an OCI reference in spec.source.
var moduleResource = abi.ResourceSelector{Group: "kopf-wasm.dev", Version: "v1", Name: "modules"}

// moduleResources keeps the host's module set in line with the cluster's
// Module objects: it pulls and loads the source of a new or changed object
// in the background, swaps it in, and writes what it loaded (or why it
// could not) into the object's status. A version that fails leaves the
// previous one serving.
type moduleResources struct {
	kc    *kube.Client
	rt    *wasmrt.Runtime
	set   *moduleSet
	pull  *modules.Puller
	log   *slog.Logger
	res   kube.Resource
	watch *kube.Watch
	queue workqueue.TypedDelayingInterface[string]
	every time.Duration // tag polling
	// statusEvery is how often the status of a Module with a canary or a
	// shadow is written (settings.Rollouts.StatusInterval).
	statusEvery time.Duration
	iso         settings.Isolation
	mu          sync.Mutex // guards loaded: reportBounds reads it
	loaded      map[string]loadedModule
	busy        atomic.Bool // a Module object is being served
	// gens are the generations the watch last delivered, by name.
	gens sync.Map
}

// startModuleResources watches the Module objects until ctx ends.
func startModuleResources(ctx context.Context, kc *kube.Client, rt *wasmrt.Runtime, set *moduleSet, opts Options) error {
	res, err := kc.Resolve(ctx, moduleResource)
	if err != nil {
		return fmt.Errorf("%w: the Module resource is not served (%v): kubectl apply -f deploy/crds/modules.kopf-wasm.dev.yaml, or run without module resources", hosterr.ErrUsage, err)
	}
	pull, err := opts.NewPuller()
	if err != nil {
		return err
	}
	m := &moduleResources{kc: kc, rt: rt, set: set, pull: pull, log: opts.Logger, res: res,
		queue: workqueue.NewTypedDelayingQueue[string](), every: opts.Settings.Modules.TagPollInterval, statusEvery: opts.Settings.Rollouts.StatusInterval,
		loaded: map[string]loadedModule{}, iso: opts.Settings.Isolation}
	m.watch, err = kc.Watch(ctx, res, kube.AllNamespaces(), m.observe)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		m.queue.ShutDown()
	}()
	go m.work(ctx)
	go m.reportBounds(ctx, opts.Settings.Isolation.StatusInterval)
	set.setResources(m)
	return nil
}

// observe queues a Module object whose spec changed (or that came or
// went); the host's own status writes change no generation and are not
// served again.
func (m *moduleResources) observe(ev kube.Event) {
	name, gen := ev.Object.GetName(), ev.Object.GetGeneration()
	if ev.Type == kube.Modified {
		if seen, ok := m.gens.Load(name); ok && seen.(int64) == gen {
			return
		}
	}
	if ev.Type == kube.Deleted {
		m.gens.Delete(name)
	} else {
		m.gens.Store(name, gen)
	}
	m.queue.Add(name)
}

func (m *moduleResources) work(ctx context.Context) {
	for {
		key, shutdown := m.queue.Get()
		if shutdown {
			return
		}
		if name, ok := strings.CutPrefix(key, statusKey); ok {
			m.statusTick(ctx, name)
		} else {
			m.busy.Store(true)
			m.reconcile(ctx, key)
			m.busy.Store(false)
		}
		m.queue.Done(key)
	}
}

// statusKey prefixes the queue's keys of status ticks: a Module with a
// canary or a shadow has its versions' figures written every
// settings.Rollouts.StatusInterval (a ':' is in no object name).
const statusKey = "status:"

// statusTick writes the versions' figures of a Module that still has a
// canary or a shadow, and schedules the next tick.
func (m *moduleResources) statusTick(ctx context.Context, name string) {
	l, ok := m.getLoaded(name)
	if !ok || !l.spec.rolls() {
		return
	}
	m.rolloutStatus(ctx, name, l)
	m.queue.AddAfter(statusKey+name, m.statusEvery)
}

// ready says whether every Module object listed so far has been served
// (loaded, or its failure written in its status).
func (m *moduleResources) ready() error {
	if !m.watch.HasSynced() || m.queue.Len() > 0 || m.busy.Load() {
		return errors.New("Module resources are being loaded")
	}
	return nil
}

// reconcile serves what the Module object name asks for now.
func (m *moduleResources) reconcile(ctx context.Context, name string) {
	obj, ok := m.watch.Get("", name)
	if !ok {
		if _, had := m.getLoaded(name); had {
			if err := m.set.setNamed(ctx, name, nil, reactor.Rollout{}); err != nil {
				m.log.Error(fmt.Sprintf("Module %s: unloading failed: %v", name, err))
				return
			}
			m.setLoaded(name, nil)
			m.log.Info("module unloaded", "resource", name)
		}
		return
	}
	want, err := specOf(obj)
	prev, had := m.getLoaded(name)
	if err == nil && want.rolls() && m.statusEvery > 0 {
		defer m.queue.AddAfter(statusKey+name, m.statusEvery) // the versions' figures
	}
	if err == nil && had && prev.spec == want && prev.generation == obj.GetGeneration() && want.pinned() {
		return
	}
	if err == nil && !want.pinned() && m.every > 0 {
		defer m.queue.AddAfter(name, m.every) // a tag may move
	}
	var limits settings.ModuleLimits
	if err == nil {
		limits, err = limitsOf(obj, m.iso)
	}
	var next loadedModule
	if err == nil {
		next, err = m.loadAll(ctx, name, want, prev)
	}
	if err == nil && had && next.same(prev) {
		next.setLimits(limits) // the same versions: nothing to swap, but the limits may have changed
		m.setLoaded(name, &next)
		return
	}
	if err == nil {
		next.setLimits(limits)
		if err = m.set.setNamed(ctx, name, next.stable.mod, next.rollout()); err != nil {
			next.closeNew(prev)
		}
	}
	if err != nil {
		m.fail(ctx, name, obj, err)
		return
	}
	m.setLoaded(name, &next)
	man := next.stable.mod.Manifest()
	handlers := []string{}
	for _, h := range man.Handlers {
		handlers = append(handlers, h.ID+"="+string(h.Kind))
	}
	m.log.Info("module loaded from a Module resource", "resource", name, "module", man.Module.Name, "digest", next.stable.digest,
		"canary", next.canary.digest, "percent", next.spec.percent, "shadow", next.shadow.digest)
	m.status(ctx, name, map[string]any{"observedGeneration": obj.GetGeneration(), "source": next.spec.source, "digest": next.stable.digest,
		"module": man.Module.Name, "version": man.Module.Version, "handlers": handlers, "error": nil})
	m.rolloutStatus(ctx, name, next)
}

// load pulls and loads a source.
func (m *moduleResources) load(ctx context.Context, name, source string) (*wasmrt.Module, string, error) {
	if source == "" || !oci.IsReference(source) {
		return nil, "", fmt.Errorf("spec.source %q is not an OCI reference (registry/repository:tag or @digest)", source)
	}
	path, err := m.pull.Pull(ctx, source)
	if err != nil {
		return nil, "", err
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	mod, err := m.rt.Load(ctx, "Module/"+name, wasm)
	if err != nil {
		return nil, "", err
	}
	return mod, wasmrt.Digest(wasm), nil
}

// status merges fields into the object's status.
func (m *moduleResources) status(ctx context.Context, name string, fields map[string]any) {
	patch, err := json.Marshal(map[string]any{"status": fields})
	if err == nil {
		_, err = m.kc.Patch(ctx, m.res.ResourceRef, "", name, "status", abi.PatchMerge, patch)
	}
	if err != nil {
		m.log.Warn(fmt.Sprintf("Module %s: writing its status failed: %v", name, err))
	}
}

// fail reports why a Module object's change could not be served.
func (m *moduleResources) fail(ctx context.Context, name string, obj *unstructured.Unstructured, err error) {
	metrics.ModuleFailed("Module/" + name)
	msg := fmt.Sprintf("%v; the previous version, if any, keeps serving", err)
	m.log.Error(fmt.Sprintf("Module %s: %s", name, msg))
	m.status(ctx, name, map[string]any{"observedGeneration": obj.GetGeneration(), "error": err.Error()})
	_ = m.kc.PostEvent(ctx, kube.RefOf(obj), abi.EventRequest{Type: "Warning", Reason: "LoadFailed", Message: msg})
}

// getLoaded is what the Module object name serves, if anything.
func (m *moduleResources) getLoaded(name string) (loadedModule, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.loaded[name]
	return l, ok
}

// setLoaded records what a Module object serves (nil: nothing).
func (m *moduleResources) setLoaded(name string, l *loadedModule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l == nil {
		delete(m.loaded, name)
		return
	}
	m.loaded[name] = *l
}
