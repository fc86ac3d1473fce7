package host

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/probing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"k8s.io/client-go/rest"
)

// ErrUsage is wrapped by the errors of options that cannot work together or
// cannot be parsed (a bad namespace pattern, Namespaces with
// AllNamespaces, no modules).
var ErrUsage = hosterr.ErrUsage

// Options configure [Run]. The tunables are in Settings, whose defaults
// are settings.Default(); [Options.withDefaults] fills in what is unset.
// The parts of the host are grouped as controller-runtime's manager
// groups them: Metrics, Health, Webhooks, LeaderElection and Sharding.
// The last three are the settings groups of the same names (a settings
// file sets them too): set here, a group replaces Settings' own.
type Options struct {
	// Modules are .wasm files, folders whose *.wasm files (not their
	// subfolders) are loaded in name order, or OCI references (see
	// [IsReference]) pulled through Registry. At least one module is needed.
	Modules []string
	// Registry says how modules named by OCI references are pulled and
	// cached. Its Logger defaults to Logger.
	Registry Registry
	// Verify is the signature policy every module must pass before it
	// loads: at start, on a hot reload and for a Module resource. A refused
	// module stops the start; on a reload or for a Module resource it is
	// logged in one line and the version already serving keeps serving. The
	// zero policy checks nothing (docs/rollouts.md).
	Verify VerifyPolicy

	// RestConfig, when set, is the cluster's client configuration (an
	// embedder's own); Kubeconfig and KubeContext are then ignored. Run
	// works on a copy.
	RestConfig *rest.Config
	// Kubeconfig is the kubeconfig file; "" means what kubectl uses:
	// $KUBECONFIG, ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	// KubeContext is the kubeconfig context; "" means its current context.
	KubeContext string

	// Namespaces are Kopf's namespace patterns (globs, "!" to exclude,
	// comma lists). Empty with AllNamespaces false means cluster-wide, as
	// Kopf does (with a warning in the log).
	Namespaces []string
	// AllNamespaces serves the whole cluster (Kopf's -A); it cannot be
	// combined with Namespaces.
	AllNamespaces bool

	// Settings are the operator's settings. Default settings.Default().
	// Run works on a copy.
	Settings *settings.Settings

	// Metrics is the Prometheus metrics server (docs/metrics.md).
	Metrics MetricsOptions
	// Health are the probe endpoints: Kubernetes' /healthz and /readyz,
	// and Kopf's liveness endpoint.
	Health HealthOptions
	// Webhooks, when set, is the admission webhook server and the webhook
	// configurations it manages (Settings.Admission).
	Webhooks *settings.Admission
	// LeaderElection, when set, is leader election: one Lease, one
	// replica handling everything (Settings.LeaderElection).
	LeaderElection *settings.LeaderElection
	// Sharding, when set, is sharding: replicas that share the objects by
	// a hash of their uid (Settings.Sharding). It excludes LeaderElection.
	Sharding *settings.Sharding

	// ModuleResources also serves the modules that Module resources
	// (kopf-wasm.dev/v1, deploy/crds/modules.kopf-wasm.dev.yaml) name: one
	// is loaded when its object appears, swapped when its source changes
	// (or its tag moves), unloaded when it is deleted, and its status says
	// what was loaded or why not. Modules may then be empty.
	ModuleResources bool

	// Canaries are second versions of modules of Modules, each a .wasm
	// file or OCI reference whose manifest names the module, handling a
	// share of the objects (docs/rollouts.md). They are loaded once and
	// not reloaded; a Module resource's spec.canary can change its share.
	Canaries []Canary
	// Shadows are versions of modules of Modules (files or references)
	// that get the same calls after the serving version and are compared,
	// never written (docs/rollouts.md). Loaded once, not reloaded.
	Shadows []string

	// Logger receives the operator's and the modules' logs, and the API
	// server's warnings (each message once, at warn). Default
	// slog.Default(). The host sets no process-wide logger: what
	// client-go writes to klog's global logger (a few reflector and
	// leader-election messages) stays klog's; kopf-wasm run routes it to
	// its own logger with klog.SetLogger(logr.FromSlogHandler(...)), and an
	// embedder that wants the same can do so.
	Logger *slog.Logger
}

// Canary is a second version of a module that handles Percent (0 to 100)
// of the objects, chosen by a stable hash of their UIDs.
type Canary struct {
	// Module is the canary's .wasm file or OCI reference.
	Module string
	// Percent is its share of the objects.
	Percent int
}

// MetricsOptions configure the metrics server of [Run], at /metrics.
type MetricsOptions struct {
	// BindAddress is where the metrics are served, e.g. ":8080"; "" or
	// "0" serves none (and records none, unless another host of the
	// process serves them).
	BindAddress string
	// Secure serves them over HTTPS, with tls.crt and tls.key of CertDir,
	// or a self-signed certificate.
	Secure bool
	// CertDir holds the server's certificate (with Secure). Empty:
	// self-signed.
	CertDir string
	// Auth lets a scrape through only with a bearer token the API server
	// accepts (TokenReview) of a user allowed to get /metrics
	// (SubjectAccessReview), as kubebuilder's scaffold. Needs Secure.
	Auth bool
}

// HealthOptions configure the probe endpoints of [Run].
type HealthOptions struct {
	// ProbeBindAddress is where /healthz and /readyz are served
	// (controller-runtime's paths), e.g. ":8081"; "" or "0" serves none.
	// /readyz answers 200 once every watch has listed its objects, no
	// watch is stalled and every module has loaded.
	ProbeBindAddress string
	// Liveness is Kopf's liveness URL, such as
	// "http://0.0.0.0:8080/healthz": while the operator runs, GET on that
	// address and path answers the modules' probe handlers (200 "ok"
	// without any); before it runs and after it stops, 503. Empty serves
	// nothing. Only http is supported.
	Liveness string
}

// withDefaults returns o with every unset field set to its default, and
// its own copy of the settings.
func (o Options) withDefaults() Options {
	var s settings.Settings
	if o.Settings != nil {
		s = *o.Settings
	} else {
		s = settings.Default()
	}
	if o.Webhooks != nil {
		s.Admission = *o.Webhooks
	}
	if o.LeaderElection != nil {
		s.LeaderElection = *o.LeaderElection
	}
	if o.Sharding != nil {
		s.Sharding = *o.Sharding
	}
	o.Settings = &s
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// validate reports options that cannot work, before anything starts.
func (o Options) validate() error {
	if len(o.Modules) == 0 && !o.ModuleResources {
		return fmt.Errorf("%w: no modules given: name at least one .wasm file or folder", ErrUsage)
	}
	if o.Settings.LeaderElection.Enabled && o.Settings.Sharding.Enabled {
		return fmt.Errorf("%w: sharding and leader election exclude each other: with sharding every replica "+
			"handles its share, with leader election one handles all; enable one of them", ErrUsage)
	}
	if o.AllNamespaces && len(o.Namespaces) > 0 {
		return fmt.Errorf("%w: namespaces and all-namespaces are mutually exclusive: pass one or the other", ErrUsage)
	}
	if o.Health.Liveness != "" {
		if _, _, err := probing.ParseLiveness(o.Health.Liveness); err != nil {
			return err
		}
	}
	for _, c := range o.Canaries {
		if c.Percent < 0 || c.Percent > 100 {
			return fmt.Errorf("%w: the canary %s has a share of %d%%: give 0 to 100", ErrUsage, c.Module, c.Percent)
		}
	}
	if o.Metrics.Auth && !o.Metrics.Secure {
		return fmt.Errorf("%w: metrics authentication sends tokens: serve the metrics over HTTPS too", ErrUsage)
	}
	if err := o.Settings.Validate(); err != nil {
		return fmt.Errorf("%w: settings: %w", ErrUsage, err)
	}
	return nil
}

// discardLogger drops everything; for offline calls that want no runtime
// chatter.
var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// restConfig is the cluster's client configuration: a copy of RestConfig,
// or the kubeconfig's.
func restConfig(cfg *rest.Config, kubeconfig, context string) (*rest.Config, error) {
	if cfg != nil {
		return rest.CopyConfig(cfg), nil
	}
	return kube.LoadConfig(kubeconfig, context)
}
