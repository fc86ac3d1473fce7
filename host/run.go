package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// Run serves the modules of opts until ctx ends, then stops cleanly and
// returns nil. In order, it
//
//  1. checks the options and reads the kubeconfig (offline),
//  2. pulls the modules named by OCI references (through the cache), then
//     loads every module with the settings' wasm limits and compile cache,
//  3. asks the API server for its version, so that an unreachable cluster is
//     one clear error rather than a stream of retries,
//  4. builds the operator (resolving every handler's resource; handlers of
//     resources the cluster does not serve are logged and left out),
//  5. runs it, with the liveness endpoint up if Options.Liveness is set.
//
// When ctx ends, in-flight processing cycles, the daemons' stop and the
// cleanup activities get settings.Process.ShutdownTimeout to finish; past
// that Run returns an error saying they were abandoned. Errors
// before the operator runs are one line that says what to fix; usage
// mistakes wrap ErrUsage, an unusable kubeconfig ErrKubeconfig, a cluster
// that does not answer ErrUnreachable.
func Run(ctx context.Context, opts Options) error {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return err
	}
	namespaces, err := parseNamespaces(opts)
	if err != nil {
		return err
	}
	cfg, err := kube.LoadConfig(opts.Kubeconfig, opts.Context)
	if err != nil {
		return classify(ErrKubeconfig, err)
	}
	paths, refs, err := pullModules(ctx, opts)
	if err != nil {
		return err
	}
	files, err := moduleFiles(paths)
	if err != nil {
		return err
	}
	rt, err := newRuntime(opts.Settings.Wasm, opts.Logger)
	if err != nil {
		return err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mods, err := loadModules(ctx, rt, files)
	if err != nil {
		return err
	}
	kc, err := kube.New(cfg, kube.Options{Settings: opts.Settings, Logger: opts.Logger})
	if err != nil {
		return classify(ErrKubeconfig, err)
	}
	defer kc.Close() // last: after everything that uses the client stopped
	if err := kc.Ping(ctx); err != nil {
		return classify(ErrUnreachable, err)
	}
	// No metrics served, none recorded (before the operator names its queue).
	metrics.SetEnabled(on(opts.MetricsBindAddress))
	g := gate.New()
	shards, err := newSharding(kc, opts)
	if err != nil {
		return err
	}
	op, err := reactor.New(ctx, reactor.Options{
		Kube: kc, Modules: mods, Namespaces: namespaces, Settings: *opts.Settings, Logger: opts.Logger, Gate: g,
		Owner: shards.owner(),
	})
	if err != nil {
		return err
	}
	shards.start(op)
	defer shards.stop() // after the operator stopped: the Lease goes last
	coord, err := startCoordination(kc, g, namespaces, opts)
	if err != nil {
		return err
	}
	defer coord.stop() // after the operator stopped: the Lease and records go last
	live, err := startLiveness(opts.Liveness, opts.Logger)
	if err != nil {
		return err
	}
	live.setStatus(coord.status)
	defer live.close()
	live.setProber(op.Probe)
	logStart(opts, mods)
	set := newModuleSet(op, mods)
	if opts.ModuleResources {
		if err := startModuleResources(ctx, kc, rt, set, opts); err != nil {
			return err
		}
	}
	obs, err := startObserving(kc, func() error { return errors.Join(op.Ready(), set.ready()) }, set, opts)
	if err != nil {
		return err
	}
	defer obs.close()
	if every := opts.Settings.Modules.ReloadInterval; every > 0 {
		r := newReloader(rt, set, files, mods, opts.Logger)
		if err := r.pollTags(opts, refs); err != nil {
			return err
		}
		// Run returns only after the reloader has stopped: a tag's pull in
		// flight writes into the module cache, which is the caller's once
		// Run has returned (TestReloadOCITag's TempDir found it written to).
		reloadCtx, stopReloading := context.WithCancel(ctx)
		var reloading sync.WaitGroup
		reloading.Add(1)
		go func() { defer reloading.Done(); r.run(reloadCtx, every) }()
		defer func() { stopReloading(); reloading.Wait() }()
	}
	return runOperator(ctx, op, live, opts)
}

// runOperator runs op until ctx ends and waits at most the settings'
// shutdown timeout for it to stop.
func runOperator(ctx context.Context, op *reactor.Operator, live *liveness, opts Options) error {
	timeout := opts.Settings.Process.ShutdownTimeout
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	live.setAlive(true)
	defer live.setAlive(false)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	opts.Logger.Info("stopping: waiting for in-flight processing cycles", "timeout", timeout)
	select {
	case err := <-done:
		if err == nil {
			opts.Logger.Info("stopped")
		}
		return err
	case <-time.After(timeout):
		return fmt.Errorf("shutdown: in-flight processing cycles did not finish within %s; abandoned them "+
			"(their objects are processed again at the next start)", timeout)
	}
}

// parseNamespaces turns the options' scope into the watch scope.
func parseNamespaces(opts Options) (kube.Namespaces, error) {
	if opts.AllNamespaces || len(opts.Namespaces) == 0 {
		return kube.AllNamespaces(), nil
	}
	ns, err := kube.ParseNamespaces(opts.Namespaces...)
	if err != nil {
		return kube.Namespaces{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return ns, nil
}

func logStart(opts Options, mods []*wasmrt.Module) {
	for _, m := range mods {
		man := m.Manifest()
		opts.Logger.Info("module loaded", "module", man.Module.Name, "version", man.Module.Version,
			"digest", m.Digest(), "handlers", len(man.Handlers))
	}
	if !opts.AllNamespaces && len(opts.Namespaces) == 0 {
		opts.Logger.Warn("no namespaces given: serving the whole cluster; pass -A/--all-namespaces to say so, or -n NAMESPACE to narrow it")
	}
}

// Classes of the errors of Run before the operator starts, for errors.Is.
var (
	// ErrKubeconfig: the kubeconfig is missing, unreadable or lacks the
	// context.
	ErrKubeconfig = errors.New("kubeconfig")
	// ErrUnreachable: the API server did not answer, or refused the
	// credentials.
	ErrUnreachable = errors.New("cluster unreachable")
)

// classify marks err with a class without changing its text.
func classify(class, err error) error { return &classified{class: class, err: err} }

// classified is an error that also matches a class with errors.Is.
type classified struct {
	class, err error
}

func (c *classified) Error() string   { return c.err.Error() }
func (c *classified) Unwrap() []error { return []error{c.class, c.err} }
