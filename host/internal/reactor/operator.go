package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/indexing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
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
	// ObserveTimer, when set, is called after each timer run with its
	// lateness and duration (spawning.Options.ObserveTimer). Optional.
	ObserveTimer func(handlerID string, lateness, took time.Duration)
	// Gate pauses the handling of changes, timers and daemons while it is
	// closed (peering, leader election; package gate). Nil: never paused.
	Gate *gate.Gate
	// Owner, when set, narrows the objects this replica handles (sharding,
	// sharding.go): cycles run only for objects it owns. Nil: all.
	Owner Owner
	// Rollouts are canary and shadow versions of Modules, by module name
	// (rollouts.go). Optional.
	Rollouts map[string]Rollout
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Operator serves the change handlers of a set of modules.
type Operator struct {
	opts Options
	kube *kube.Client
	log  *slog.Logger
	// storage keeps state where the settings say; annotated keeps the
	// diff-base in an annotation whatever they say, for resources without
	// the status subresource (a status there may not be stored at all, and
	// the object and its status go in one request anyway).
	storage, annotated *persistence.Storage
	// pruning holds the resources whose status drops the diff-base.
	pruning sync.Map
	mem     *memories
	// queue hands objects to the workers; limiter is its rate limiter,
	// Kopf's error delays for objects whose processing failed.
	queue   workqueue.TypedRateLimitingInterface[objectKey]
	limiter *errorDelays

	// exec calls every handler (execution layer).
	exec *execution.Executor
	// current is the module set the executor calls, replaced (never
	// changed) by a swap, so that timers and daemons read it without mu.
	current atomic.Pointer[map[string]*wasmrt.Module]
	// rollouts are the canary and shadow versions, replaced with current.
	rollouts atomic.Pointer[map[string]*rolloutState]
	// reg is the registry the admission engine reads, replaced with the
	// module set.
	reg atomic.Pointer[registry.Registry]
	// admission serves the webhook handlers and keeps the managed
	// webhook configurations (nil: none served); see ServeWebhooks.
	admission *admission.Engine
	// indexing keeps the modules' indexes (indexes.go); held are the
	// objects waiting for them, fills the indexes to fill when Run starts.
	indexing *indexing.Engine
	held     held
	fills    []indexing.Fill
	// scan follows the CRDs and resolves the selectors again (scanning.go).
	scan scanner

	// mu guards the module set: cycles hold it for reading, a swap of
	// modules for writing, so every cycle runs on one version.
	mu       sync.RWMutex
	modules  map[string]*wasmrt.Module
	registry *registry.Registry
	spawner  *spawning.Spawner
	runCtx   context.Context    // set by Run, for watches a swap starts
	served   map[string]*served // by resource GVR string

	// parked are the keys taken from the queue while the gate was closed.
	parkMu sync.Mutex
	parked map[objectKey]struct{}

	// own brackets cycles for the hand-over of objects (sharding.go).
	own ownership
	// shares keeps each module's share of the workers (shares.go).
	shares *shares

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
	if err := opts.Settings.Validate(); err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	popts := persistence.Options{
		Prefix: opts.Settings.Persistence.Prefix, DiffBaseKey: opts.Settings.Persistence.DiffBaseKey,
		Finalizer: opts.Settings.Persistence.Finalizer, V1Keys: opts.Settings.Persistence.V1Keys,
		DiffBaseAnnotationBytes: opts.Settings.Persistence.DiffBaseAnnotationBytes,
		DiffBaseObjectBytes:     opts.Settings.Persistence.DiffBaseObjectBytes,
		MaxEssenceBytes:         opts.Settings.Watching.MaxEventBytes, // no object is larger
	}
	annotated, err := persistence.New(popts)
	if err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	popts.DiffBaseInStatus = opts.Settings.Persistence.DiffBaseInStatus
	storage, err := persistence.New(popts)
	if err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	o := &Operator{
		opts: opts, kube: opts.Kube, log: opts.Logger, storage: storage, annotated: annotated, mem: newMemories(),
		served: map[string]*served{}, parked: map[objectKey]struct{}{},
		limiter: newErrorDelays(opts.Settings.Queueing.ErrorDelays),
	}
	o.queue = workqueue.NewTypedRateLimitingQueueWithConfig[objectKey](o.limiter,
		workqueue.TypedRateLimitingQueueConfig[objectKey]{Name: metrics.QueueName("kopf-wasm")})
	o.shares = newShares(o.workerShare, o.queue.Add)
	o.exec = execution.New(execution.Options{
		Modules: o.module, Route: o.route, Shadow: o.shadowOf, Cluster: o.kube, Settings: opts.Settings, Logger: o.log, Limits: o.limits,
	})
	o.indexing = indexing.New(indexing.Options{
		Exec: o.exec, Inline: opts.Settings.Execution.IndexInline, Logger: o.log,
		OnReady: func(string) { o.releaseHeld() },
	})
	o.exec.ServeIndices(o.indexing)
	if err := o.install(ctx, opts.Modules, opts.Rollouts); err != nil {
		return nil, err
	}
	o.spawner = spawning.New(spawning.Options{
		Exec: o.exec, Modules: slices.Collect(maps.Keys(o.modules)), Logger: o.log, ObserveTimer: opts.ObserveTimer,
		MaxDaemons: opts.Settings.Execution.MaxDaemons, Gate: opts.Gate,
		CancellationPolling: opts.Settings.Execution.CancellationPolling,
		TimerStopWait:       opts.Settings.Execution.TimerStopWait,
		StatusSubresource: func(resource string) bool {
			o.mu.RLock()
			defer o.mu.RUnlock()
			s := o.served[resource]
			return s != nil && s.res.Status
		},
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
	o.mu.Lock()
	o.runCtx = ctx
	var err error
	fresh := map[string]bool{}
	for key, s := range o.served {
		if err = o.watch(ctx, key, s); err != nil {
			break
		}
		fresh[key] = true
	}
	fills := o.fills
	o.fills = nil
	o.mu.Unlock()
	if err == nil {
		o.fillIndexes(ctx, fills, fresh)
	}
	if err == nil {
		// Webhooks are served from now on, whatever happens to change
		// handling (as Kopf's); a swap from now on updates them too.
		if o.admission != nil {
			if err = o.admission.Update(ctx); err != nil {
				err = fmt.Errorf("reactor: %w", err)
			}
		}
	}
	if err != nil {
		o.queue.ShutDown()
		if o.admission != nil {
			stopCtx, cancel := context.WithTimeout(context.Background(), o.opts.Settings.Process.CleanupTimeout)
			o.admission.Stop(stopCtx) // a server started by Update serves until Stop
			cancel()
		}
		return err
	}
	if o.opts.Gate != nil {
		o.wg.Add(1) // awaited below: it may resume (queue, spawner) until ctx ends
		go func() { defer o.wg.Done(); o.followGate(ctx) }()
	}
	o.startScanning(ctx)
	for range o.opts.Settings.Execution.Workers {
		o.wg.Add(1)
		go o.worker(ctx)
	}
	<-ctx.Done()
	o.queue.ShutDownWithDrain()
	o.wg.Wait()
	// ShutDownWithDrain leaves the delaying queue's timer goroutine
	// running (client-go stops it in ShutDown only): it leaked per Run.
	o.queue.ShutDown()
	stopCtx, cancel := context.WithTimeout(context.Background(), o.opts.Settings.Process.CleanupTimeout)
	o.spawner.Shutdown(stopCtx)
	o.exec.WaitShadows()
	if o.admission != nil {
		o.admission.Stop(stopCtx)
	}
	cancel()
	o.mu.RLock()
	var watches []*kube.Watch
	for _, s := range o.served {
		if s.watch != nil {
			watches = append(watches, s.watch)
		}
	}
	o.mu.RUnlock()
	for _, w := range watches {
		w.Stop()
	}
	return nil
}

// cleanup runs the cleanup activities after the operator stopped, within
// settings.Process.CleanupTimeout.
func (o *Operator) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), o.opts.Settings.Process.CleanupTimeout)
	defer cancel()
	if err := o.runActivities(ctx, abi.KindCleanup); err != nil {
		o.log.Error(fmt.Sprintf("Cleanup did not finish: %v", err))
	}
	if err := o.exec.CloseRecorder(); err != nil {
		o.log.Error(fmt.Sprintf("Recording: %v", err))
	}
}

// storageFor returns the storage for a resource's objects.
func (o *Operator) storageFor(res kube.Resource) *persistence.Storage {
	if _, prunes := o.pruning.Load(res.String()); res.Status && !prunes {
		return o.storage
	}
	return o.annotated
}

// eventHandler queues the objects of one resource's watch events.
func (o *Operator) eventHandler(resource string) kube.Handler {
	return func(ev kube.Event) {
		key := objectKey{resource: resource, namespace: ev.Object.GetNamespace(), name: ev.Object.GetName()}
		o.mu.RLock()
		// Events of a paused host are dropped, as Kopf's closed stream does.
		keep := o.wantsEvents(resource) && o.opts.Gate.Open() && o.owns(ev.Object)
		s := o.served[resource]
		ctx := o.runCtx
		o.mu.RUnlock()
		if s != nil && ctx != nil {
			o.observeIndexes(ctx, s.res, ev)
		}
		if o.log.Enabled(context.Background(), slog.LevelDebug) { // -v: every watch event, as Kopf's debug log
			o.log.Debug(fmt.Sprintf("Received a watch event %s (resourceVersion %s).", ev.Type, ev.Object.GetResourceVersion()), execution.ObjectAttrs(ev.Object)...)
		}
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
		if o.enter(key) {
			o.processOwned(ctx, key)
			o.opts.Gate.Leave()
		}
		o.shares.settle(key)
		o.queue.Done(key)
	}
}

// module returns the current version of a module (nil when none is
// loaded by that name).
func (o *Operator) module(name string) execution.Module {
	if set := o.current.Load(); set != nil {
		if m := (*set)[name]; m != nil {
			return m
		}
	}
	return nil
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
