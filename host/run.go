package host

import (
	"context"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/operator"
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
//  5. runs it, with the endpoints of Options.Metrics and Options.Health.
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
	cfg, err := restConfig(opts.RestConfig, opts.Kubeconfig, opts.KubeContext)
	if err != nil {
		return classify(ErrKubeconfig, err)
	}
	paths, refs, err := modules.PullAll(ctx, opts.Modules, opts.newPuller)
	if err != nil {
		return err
	}
	files, err := modules.Files(paths)
	if err != nil {
		return err
	}
	verifier, err := opts.Verify.verifier(opts.Registry)
	if err != nil {
		return err
	}
	if err := modules.VerifyFiles(verifier, files, refs); err != nil {
		return err
	}
	rt, err := modules.NewRuntime(opts.Settings.Wasm, opts.Logger)
	if err != nil {
		return err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mods, err := modules.LoadAll(ctx, rt, files)
	if err != nil {
		return err
	}
	rollouts, err := loadRollouts(ctx, opts, rt, verifier, mods)
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
	return operator.Run(ctx, operator.Options{
		Kube: kc, Runtime: rt, Modules: mods, Files: files, Refs: refs, NewPuller: opts.newPuller, Verifier: verifier,
		Namespaces: namespaces, Unscoped: !opts.AllNamespaces && len(opts.Namespaces) == 0,
		Settings: opts.Settings, Logger: opts.Logger, Liveness: opts.Health.Liveness,
		MetricsBindAddress: opts.Metrics.BindAddress, MetricsSecure: opts.Metrics.Secure,
		MetricsCertDir: opts.Metrics.CertDir, MetricsAuth: opts.Metrics.Auth,
		HealthProbeBindAddress: opts.Health.ProbeBindAddress, ModuleResources: opts.ModuleResources,
		Rollouts: rollouts,
	})
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

// Classes of the errors of Run before the operator starts, for errors.Is.
var (
	// ErrKubeconfig: the kubeconfig is missing, unreadable or lacks the
	// context.
	ErrKubeconfig = hosterr.ErrKubeconfig
	// ErrUnreachable: the API server did not answer, or refused the
	// credentials.
	ErrUnreachable = hosterr.ErrUnreachable
)

// classify marks err with a class without changing its text.
func classify(class, err error) error { return hosterr.Classify(class, err) }
