package operator

import (
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Options configure [Run]: what host.Run has made of host.Options.
type Options struct {
	// Kube is the connected cluster client. Required.
	Kube *kube.Client
	// Runtime loaded Modules, from Files (same order); Refs are the OCI
	// references the pulled files came from, by file.
	Runtime *wasmrt.Runtime
	Modules []*wasmrt.Module
	Files   []string
	Refs    map[string]string
	// NewPuller pulls modules named by OCI references (reloads of tags,
	// Module resources).
	NewPuller func() (*modules.Puller, error)
	// Verifier checks a changed module file before the reloader loads it
	// (pulled modules are checked by the Puller); nil checks nothing.
	Verifier *modules.Verifier
	// Namespaces is the watch scope; Unscoped says that no namespaces were
	// given at all (cluster-wide by default, with a warning).
	Namespaces kube.Namespaces
	Unscoped   bool
	// Settings are the host's settings (required); Logger its logger.
	Settings *settings.Settings
	Logger   *slog.Logger

	// Liveness is Kopf's liveness URL ("" serves none).
	Liveness string
	// MetricsBindAddress, MetricsSecure, MetricsCertDir and MetricsAuth
	// are host.Options' metrics server.
	MetricsBindAddress string
	MetricsSecure      bool
	MetricsCertDir     string
	MetricsAuth        bool
	// HealthProbeBindAddress serves /healthz and /readyz.
	HealthProbeBindAddress string
	// ModuleResources also serves the Module resources' modules.
	ModuleResources bool
	// Rollouts are the canary and shadow versions of run's flags, by
	// module name (loaded once, not reloaded).
	Rollouts map[string]reactor.Rollout
}
