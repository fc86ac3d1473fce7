package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/probing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
)

// Run serves the modules of opts until ctx ends (host.Run documents it):
// it starts every engine ([spawn]), runs the reactor and, once it has
// stopped, stops the engines in reverse order.
func Run(ctx context.Context, opts Options) error {
	e, err := spawn(ctx, opts)
	if err != nil {
		return err
	}
	defer e.stop()
	return runOperator(ctx, e.op, e.live, opts)
}

// runOperator runs op until ctx ends and waits at most the settings'
// shutdown timeout for it to stop.
func runOperator(ctx context.Context, op *reactor.Operator, live *probing.Liveness, opts Options) error {
	timeout := opts.Settings.Process.ShutdownTimeout
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	live.SetAlive(true)
	defer live.SetAlive(false)
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
