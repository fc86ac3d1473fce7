package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
	kc     *kube.Client
	rt     *wasmrt.Runtime
	set    *moduleSet
	pull   *modules.Puller
	log    *slog.Logger
	res    kube.Resource
	watch  *kube.Watch
	queue  workqueue.TypedDelayingInterface[string]
	every  time.Duration // tag polling
	iso    settings.Isolation
	mu     sync.Mutex // guards loaded: reportBounds reads it
	loaded map[string]loadedModule
	busy   atomic.Bool // a Module object is being served
}

type loadedModule struct {
	source, digest string
	generation     int64
	module         string // the manifest's name
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
		queue: workqueue.NewTypedDelayingQueue[string](), every: opts.Settings.Modules.TagPollInterval, loaded: map[string]loadedModule{},
		iso: opts.Settings.Isolation}
	m.watch, err = kc.Watch(ctx, res, kube.AllNamespaces(), func(ev kube.Event) { m.queue.Add(ev.Object.GetName()) })
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

func (m *moduleResources) work(ctx context.Context) {
	for {
		name, shutdown := m.queue.Get()
		if shutdown {
			return
		}
		m.busy.Store(true)
		m.reconcile(ctx, name)
		m.busy.Store(false)
		m.queue.Done(name)
	}
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
	m.mu.Lock()
	prev, had := m.loaded[name]
	m.mu.Unlock()
	if !ok {
		if had {
			if err := m.set.setNamed(ctx, name, nil); err != nil {
				m.log.Error(fmt.Sprintf("Module %s: unloading failed: %v", name, err))
				return
			}
			m.setLoaded(name, nil)
			m.log.Info("module unloaded", "resource", name)
		}
		return
	}
	source, _, _ := unstructured.NestedString(obj.Object, "spec", "source")
	if had && prev.source == source && prev.generation == obj.GetGeneration() && modules.Pinned(source) {
		return
	}
	if !modules.Pinned(source) && m.every > 0 {
		defer m.queue.AddAfter(name, m.every) // a tag may move
	}
	limits, err := limitsOf(obj, m.iso)
	if err != nil {
		m.fail(ctx, name, obj, err)
		return
	}
	mod, digest, err := m.load(ctx, name, source)
	if err == nil && had && digest == prev.digest {
		mod.Close() // the same version: nothing to swap, but its limits may have changed
		m.set.setLimits(name, limits)
		m.setLoaded(name, &loadedModule{source: source, digest: digest, generation: obj.GetGeneration(), module: prev.module})
		return
	}
	if err == nil {
		mod.SetLimits(limits)
		if err = m.set.setNamed(ctx, name, mod); err != nil {
			mod.Close()
		}
	}
	if err != nil {
		m.fail(ctx, name, obj, err)
		return
	}
	man := mod.Manifest()
	m.setLoaded(name, &loadedModule{source: source, digest: digest, generation: obj.GetGeneration(), module: man.Module.Name})
	handlers := []string{}
	for _, h := range man.Handlers {
		handlers = append(handlers, h.ID+"="+string(h.Kind))
	}
	m.log.Info("module loaded from a Module resource", "resource", name, "module", man.Module.Name, "digest", digest)
	m.status(ctx, name, map[string]any{"observedGeneration": obj.GetGeneration(), "source": source, "digest": digest,
		"module": man.Module.Name, "version": man.Module.Version, "handlers": handlers, "error": nil})
}

// fail reports why a Module object's change could not be served.
func (m *moduleResources) fail(ctx context.Context, name string, obj *unstructured.Unstructured, err error) {
	metrics.ModuleFailed("Module/" + name)
	msg := fmt.Sprintf("%v; the previous version, if any, keeps serving", err)
	m.log.Error(fmt.Sprintf("Module %s: %s", name, msg))
	m.status(ctx, name, map[string]any{"observedGeneration": obj.GetGeneration(), "error": err.Error()})
	_ = m.kc.PostEvent(ctx, kube.RefOf(obj), abi.EventRequest{Type: "Warning", Reason: "LoadFailed", Message: msg})
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
