package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
)

// Run serves the modules of opts until ctx ends (host.Run documents it).
func Run(ctx context.Context, opts Options) error {
	kc, rt, mods, files, refs, namespaces := opts.Kube, opts.Runtime, opts.Modules, opts.Files, opts.Refs, opts.Namespaces
	// No metrics served, none recorded (before the operator names its
	// queue), unless another host of the process serves them.
	defer metrics.Hold(on(opts.MetricsBindAddress))()
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
	logStart(opts)
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

func logStart(opts Options) {
	for _, m := range opts.Modules {
		man := m.Manifest()
		opts.Logger.Info("module loaded", "module", man.Module.Name, "version", man.Module.Version,
			"digest", m.Digest(), "handlers", len(man.Handlers))
	}
	if opts.Unscoped {
		opts.Logger.Warn("no namespaces given: serving the whole cluster; name the namespaces to narrow it, or ask for all namespaces to say so")
	}
}
