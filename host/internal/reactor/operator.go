package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Options configure an [Operator].
type Options struct {
	// Kube is the cluster client. Required.
	Kube *kube.Client
	// Modules are the loaded handler modules, in load order. Their names
	// must be unique.
	Modules []*wasmrt.Module
	// Namespaces is the scope of the watches of namespaced resources.
	Namespaces kube.Namespaces
	// Settings are the host's settings (start from settings.Default()).
	Settings settings.Settings
	// Logger receives the operator's logs. Default slog.Default().
	Logger *slog.Logger
	// ConsistencyTimeout is the longest wait, after the operator patched an
	// object, for the watch to deliver the patched version before the object
	// is processed again regardless. Default 5s, as Kopf.
	ConsistencyTimeout time.Duration
	// CleanupTimeout bounds the cleanup activities at exit. Default 30s.
	CleanupTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ConsistencyTimeout <= 0 {
		o.ConsistencyTimeout = 5 * time.Second
	}
	if o.CleanupTimeout <= 0 {
		o.CleanupTimeout = 30 * time.Second
	}
	if o.Settings.Execution.Workers <= 0 {
		o.Settings.Execution.Workers = settings.Default().Execution.Workers
	}
	return o
}

// Operator serves the change handlers of a set of modules.
type Operator struct {
	opts    Options
	kube    *kube.Client
	log     *slog.Logger
	storage *persistence.Storage
	mem     *memories
	queue   workqueue.TypedDelayingInterface[objectKey]

	modules  map[string]*wasmrt.Module
	registry *registry.Registry
	spawner  *spawning.Spawner
	served   map[string]*served // by resource GVR string

	wg sync.WaitGroup
}

// served is one watched resource.
type served struct {
	res   kube.Resource
	watch *kube.Watch
}

// New checks the options, builds the registry from the modules' manifests
// (resolving every resource selector through discovery) and returns an
// operator ready to [Operator.Run]. A handler whose resource the cluster
// does not serve is logged and left out; the others are served.
func New(ctx context.Context, opts Options) (*Operator, error) {
	opts = opts.withDefaults()
	if opts.Kube == nil {
		return nil, errors.New("reactor: no Kubernetes client")
	}
	storage, err := persistence.New(persistence.Options{
		Prefix: opts.Settings.Persistence.Prefix, DiffBaseKey: opts.Settings.Persistence.DiffBaseKey,
		Finalizer: opts.Settings.Persistence.Finalizer, V1Keys: opts.Settings.Persistence.V1Keys,
		DiffBaseInStatus: opts.Settings.Persistence.DiffBaseInStatus,
	})
	if err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	o := &Operator{
		opts: opts, kube: opts.Kube, log: opts.Logger, storage: storage, mem: newMemories(),
		modules: map[string]*wasmrt.Module{}, served: map[string]*served{},
	}
	var manifests []abi.Manifest
	for _, m := range opts.Modules {
		// Handlers name their module by its manifest's name.
		name := m.Manifest().Module.Name
		if _, dup := o.modules[name]; dup {
			return nil, fmt.Errorf("reactor: two modules are named %q in their manifests; rename one", name)
		}
		o.modules[name] = m
		manifests = append(manifests, m.Manifest())
	}
	resolved := map[string]kube.Resource{}
	o.registry, err = registry.New(manifests, func(sel abi.ResourceSelector) (abi.ResourceRef, error) {
		res, err := o.kube.Resolve(ctx, sel)
		if err != nil {
			return abi.ResourceRef{}, err
		}
		resolved[res.String()] = res
		return res.ResourceRef, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	for _, u := range o.registry.Unresolved() {
		o.log.Error("handler not served: its resource is not served by the cluster; install the CRD or fix the selector",
			"module", u.Module, "handler", u.Spec.ID, "error", u.Err)
	}
	for _, ref := range o.registry.Resources() {
		res := resolved[refString(ref)]
		o.served[refString(ref)] = &served{res: res}
	}
	o.spawner = spawning.New(spawning.Options{
		Kube: o.kube, Modules: o.modules, Logger: o.log,
		MaxDaemons: opts.Settings.Execution.MaxDaemons, DefaultBackoff: opts.Settings.Execution.DefaultBackoff,
		Host: func(obj *unstructured.Unstructured) wasmrt.Host {
			return &guestHost{kube: o.kube, about: kube.RefOf(obj), posting: o.opts.Settings.Posting}
		},
		StatusSubresource: func(resource string) bool { return o.served[resource].res.Status },
		Wake: func(k spawning.Key) {
			o.queue.Add(objectKey{resource: k.Resource, namespace: k.Namespace, name: k.Name})
		},
	})
	return o, nil
}

// Run watches every served resource and processes its objects until ctx
// ends. In-flight cycles finish before Run returns.
func (o *Operator) Run(ctx context.Context) error {
	if err := o.runActivities(ctx, abi.KindStartup); err != nil {
		return fmt.Errorf("reactor: %w", err)
	}
	defer o.cleanup()
	o.queue = workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[objectKey]{Name: "kopf-wasm"})
	for key, s := range o.served {
		w, err := o.kube.Watch(ctx, s.res, o.opts.Namespaces, o.eventHandler(key))
		if err != nil {
			o.queue.ShutDown()
			return fmt.Errorf("reactor: watch %s: %w", key, err)
		}
		s.watch = w
		o.log.Info("watching", "resource", key, "namespaces", o.opts.Namespaces.String())
	}
	for range o.opts.Settings.Execution.Workers {
		o.wg.Add(1)
		go o.worker(ctx)
	}
	<-ctx.Done()
	o.queue.ShutDownWithDrain()
	o.wg.Wait()
	stopCtx, cancel := context.WithTimeout(context.Background(), o.opts.CleanupTimeout)
	o.spawner.Shutdown(stopCtx)
	cancel()
	for _, s := range o.served {
		s.watch.Stop()
	}
	return nil
}

// cleanup runs the cleanup activities after the operator stopped, within
// Options.CleanupTimeout.
func (o *Operator) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), o.opts.CleanupTimeout)
	defer cancel()
	if err := o.runActivities(ctx, abi.KindCleanup); err != nil {
		o.log.Error(fmt.Sprintf("Cleanup did not finish: %v", err))
	}
}

// eventHandler queues the objects of one resource's watch events.
func (o *Operator) eventHandler(resource string) kube.Handler {
	keep := o.wantsEvents(resource)
	return func(ev kube.Event) {
		key := objectKey{resource: resource, namespace: ev.Object.GetNamespace(), name: ev.Object.GetName()}
		o.mem.observe(key, ev, keep)
		o.queue.Add(key)
	}
}

// worker processes queued objects until the queue shuts down.
func (o *Operator) worker(ctx context.Context) {
	defer o.wg.Done()
	for {
		key, shutdown := o.queue.Get()
		if shutdown {
			return
		}
		o.process(ctx, key)
		o.queue.Done(key)
	}
}

// Stats are the operator's counters.
type Stats struct {
	// Kube counts the requests that reached the API server.
	Kube kube.Stats
}

// Stats returns the operator's counters.
func (o *Operator) Stats() Stats { return Stats{Kube: o.kube.Stats()} }

func refString(ref abi.ResourceRef) string {
	return kube.Resource{ResourceRef: ref}.String()
}
