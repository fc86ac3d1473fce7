package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

type runOptions struct {
	option.Kube
	option.Namespaces
	option.Peering
	option.Sharding
	option.Registry
	option.Observe
	verify option.Verify

	liveness string
	// moduleResources serves the modules of Module resources too.
	moduleResources bool
	// config is a YAML file of settings.
	config string
	// canaries (MODULE=PERCENT) and shadows are second versions of modules.
	canaries, shadows []string
	// webhook flags override settings.Admission when given.
	webhookListen, webhookHost, webhookCertDir, webhookCertSecret, webhookManaged, webhookCADump, webhookService string
}

const runLong = `Run an operator: load the modules, connect to the cluster and serve the
modules' handlers until interrupted (SIGINT or SIGTERM; a second signal
exits at once). MODULE is a .wasm file, a folder of them, or an OCI
reference (see push): an argument is a reference when it starts with oci://,
or when it contains ':' or '@' and is not an existing file or folder.
References are pulled through the module cache ($KOPF_WASM_CACHE/modules):
one pinned by digest and pulled before needs no registry; a tag is resolved
at the registry, or, when that is unreachable, served from the cache with
the digest last seen for it and a warning.

The host serves every handler kind of the ABI: create, update, delete,
resume, field and event handlers, indices, timers, daemons, startup and
cleanup activities, probes (on the liveness endpoint, -L), validating and
mutating admission webhooks, and conversion webhooks.

Webhooks: once a module declares a validating, mutating or convert handler, the host
serves AdmissionReviews over HTTPS on --webhook-listen (default :9443), one
path per handler, /<module>/<handler-id>. Without --webhook-cert-dir it
generates a CA and a certificate for --webhook-host (and
settings admission.extraSANs) at start; --webhook-ca-dump writes that CA.
With --webhook-cert-dir it serves tls.crt and tls.key from the folder and
reads them again when they change. With --webhook-cert-secret NAMESPACE/NAME
the generated CA and certificate are kept in that Secret (kubernetes.io/tls),
shared by every replica: the first creates it, all serve it and write the
same caBundle, one replaces it 30 days before its year ends (settings
admission.certRenewBefore) and the others follow within
admission.certCheckInterval; a Secret that holds no usable certificate is
reported (delete it to have a new one made). With --webhook-managed NAME it creates
and keeps up to date a ValidatingWebhookConfiguration and a
MutatingWebhookConfiguration named NAME, one webhook per handler, pointing at
https://<webhook-host>:<port>/<module>/<handler-id> (or, with
--webhook-service NAMESPACE/NAME for a host inside the cluster, at that
Service), and on a clean stop removes the entries of handlers that are not
persistent. It also points the CRD of each convert handler at it
(spec.conversion), and leaves that in place when it stops.

Several hosts (docs/peering.md): by default the host takes part in Kopf's
peering: if the KopfPeering/ClusterKopfPeering CRD (deploy/peering/) and the
object "default" exist, it writes keep-alives there in Kopf's format and
pauses while a live peer has a higher priority (-p), or the same one (then
every host of that priority pauses, with Kopf's warning); otherwise it runs
alone. -P NAME makes the peering NAME mandatory (paused until it exists),
--standalone turns peering off, --dev takes priority 666. With --leader-elect
the replicas compete for a coordination.k8s.io/v1 Lease (named as the
peering, in --leader-elect-namespace) and only the leader handles; auto
peering is then off. A paused host stops handling changes, timers and
daemons (daemons see the reason "pausing"), keeps its watches warm, keeps
serving webhooks, logs why, and reports it on the liveness endpoint
(Kopf-Wasm-Status header); when it resumes it handles every object afresh.

Module files are checked every second and modules served by an OCI tag every
30 seconds (settings modules.reloadInterval and modules.tagPollInterval): a
new version is loaded in the background and swapped in between processing
cycles; one that does not load leaves the old one serving. With
--module-resources the host also serves the modules that Module resources
(kopf-wasm.dev/v1, deploy/crds/modules.kopf-wasm.dev.yaml) name, and MODULE
arguments become optional.

Rollouts (docs/rollouts.md): --canary MODULE=PERCENT serves a second version
of a module (a file or reference whose manifest names a module of the
arguments) for PERCENT of the objects, chosen by a stable hash of their
UIDs; each object is handled by exactly one version, its timers and daemons
too. --shadow MODULE calls a version after the serving one with the same
requests and compares its outcomes, results and patches, never writing them
(no patches, no Events, Kubernetes writes as dry runs); differences are
logged and counted. Both are loaded once; a Module resource's spec.canary
and spec.shadow can be changed while the host runs.

Compiled modules are cached in $KOPF_WASM_CACHE/wasm (default
~/.cache/kopf-wasm/wasm), so the next start skips the compilation.

--config reads the operator's settings (workers, timeouts, retries, watch
and wasm limits, Kopf's annotation prefix, ...) from a YAML file whose keys
are those of docs/settings.md, e.g. "execution: {workers: 32}"; keys left out
keep their defaults, and $KOPF_WASM_CACHE wins over wasm.cacheDir. An
unknown key or a bad value stops the command before it starts anything.

Example - Serve the example module in the namespace "default":
  kopf-wasm run -n default bin/wasm/kopfexample.wasm

Example - Serve a module from a registry, pinned by digest:
  kopf-wasm run -n default ghcr.io/acme/handlers@sha256:0123...

Example - Serve every module of a folder in the whole cluster, with JSON logs:
  kopf-wasm run -A --log-format json ./modules/

Example - Serve namespaces "team-*" except "team-test", with a liveness endpoint:
  kopf-wasm run -n 'team-*,!team-test' -L http://0.0.0.0:8080/healthz handlers.wasm

Example - Serve webhooks to a local control plane, with managed configurations:
  kopf-wasm run -A --webhook-listen 127.0.0.1:9443 --webhook-host 127.0.0.1 \
    --webhook-managed auto.kopf-wasm.dev handlers.wasm

Example - Three replicas, one handling at a time (Lease leader election):
  kopf-wasm run -A --leader-elect --leader-elect-namespace operators handlers.wasm

Example - A laptop host pausing the deployed ones of the peering "default":
  kopf-wasm run -A --dev handlers.wasm

Example - A canary handling a tenth of the objects, and a shadow of it compared:
  kopf-wasm run -A --canary v2/handlers.wasm=10 --shadow v3/handlers.wasm v1/handlers.wasm

Example - Replicas that share the objects, each object handled by one of them:
  kopf-wasm run -A --shards --shard-namespace operators handlers.wasm

Example - Serve with the settings of a file:
  kopf-wasm run -A --config settings.yaml handlers.wasm`

func runCmd(g *globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] MODULE...",
		Short: "Run an operator from handler modules against a cluster",
		Long:  runLong,
		Args: func(cmd *cobra.Command, modules []string) error {
			if o.moduleResources {
				return nil
			}
			return args(1, -1, "MODULE (a .wasm file, a folder of them, or an OCI reference)")(cmd, modules)
		},
		RunE: func(cmd *cobra.Command, modules []string) error {
			if err := o.Namespaces.Validate(); err != nil {
				return err
			}
			if err := o.Peering.Validate(); err != nil {
				return err
			}
			if err := o.Sharding.Validate(); err != nil {
				return err
			}
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			defer routeKlog(log)()
			s, err := runSettings(o.config)
			if err != nil {
				return err
			}
			o.applyWebhookFlags(cmd, &s)
			o.Peering.Apply(&s)
			o.Sharding.Apply(&s)
			if err := s.Validate(); err != nil {
				return clierr.Usagef(err, "")
			}
			if s.Sharding.Enabled && s.LeaderElection.Enabled {
				return clierr.Usagef(errors.New("sharding and leader election exclude each other"),
					"with --shards every replica handles its share, with --leader-elect one handles all; pass one of them")
			}
			canaries, err := parseCanaries(o.canaries)
			if err != nil {
				return err
			}
			return host.Run(cmd.Context(), host.Options{
				Canaries: canaries, Shadows: o.shadows,
				Modules: modules, Kubeconfig: o.Kubeconfig, KubeContext: o.Context,
				Namespaces: o.Patterns, AllNamespaces: o.All,
				Settings: &s, Logger: log, Registry: registryOptions(o.Registry, log),
				Verify: verifyPolicy(o.verify), ModuleResources: o.moduleResources,
				Metrics: host.MetricsOptions{BindAddress: o.MetricsBindAddress, Secure: o.MetricsSecure,
					CertDir: o.MetricsCertDir, Auth: o.MetricsAuth},
				Health: host.HealthOptions{ProbeBindAddress: o.HealthProbeBindAddress, Liveness: o.liveness},
			})
		},
	}
	fs := cmd.Flags()
	o.Kube.ApplyFlags(fs)
	o.Namespaces.ApplyFlags(fs)
	o.Peering.ApplyFlags(fs)
	o.Sharding.ApplyFlags(fs)
	o.Registry.ApplyFlags(fs)
	o.Observe.ApplyFlags(fs)
	o.verify.ApplyFlags(fs, "verify-")
	fs.StringVarP(&o.liveness, "liveness", "L", "",
		"serve a liveness endpoint at this URL, e.g. http://0.0.0.0:8080/healthz (200 while the operator runs)")
	fs.BoolVar(&o.moduleResources, "module-resources", false,
		"also serve the modules named by Module resources (kopf-wasm.dev/v1) in the cluster")
	fs.StringArrayVar(&o.canaries, "canary", nil,
		"serve this version of a module (.wasm file or OCI reference) for a share of the objects, MODULE=PERCENT, e.g. v2/handlers.wasm=10 (repeatable)")
	fs.StringArrayVar(&o.shadows, "shadow", nil,
		"call this version of a module (.wasm file or OCI reference) beside the serving one and compare its answers, never writing them (repeatable)")
	fs.StringVar(&o.config, "config", "",
		"read the settings from this YAML file (keys and defaults: docs/settings.md)")
	fs.StringVar(&o.webhookListen, "webhook-listen", "",
		"address of the admission webhook server, host:port (port 0: a free one; default :9443, settings admission.listen)")
	fs.StringVar(&o.webhookHost, "webhook-host", "",
		"host name or IP address under which the API server reaches the webhook server (URLs and certificate; settings admission.host)")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "",
		"serve tls.crt and tls.key from this folder, reloaded when they change, instead of a generated certificate (settings admission.certDir)")
	fs.StringVar(&o.webhookCertSecret, "webhook-cert-secret", "",
		"NAMESPACE/NAME of a Secret that keeps the generated certificate, shared by every replica: created by the first, replaced near its end (settings admission.certSecret)")
	fs.StringVar(&o.webhookManaged, "webhook-managed", "",
		"create and maintain webhook configurations of this name for the webhook handlers, e.g. auto.kopf-wasm.dev (settings admission.managed)")
	fs.StringVar(&o.webhookService, "webhook-service", "",
		"NAMESPACE/NAME of a Service that forwards to the webhook server (a host inside the cluster): the managed webhooks use it instead of a URL (settings admission.service, port admission.servicePort)")
	fs.StringVar(&o.webhookCADump, "webhook-ca-dump", "",
		"write the generated CA certificate (PEM) to this file (settings admission.caDump)")
	return cmd
}

// parseCanaries reads the --canary flags, MODULE=PERCENT each.
func parseCanaries(flags []string) ([]host.Canary, error) {
	var out []host.Canary
	for _, f := range flags {
		module, share, ok := strings.Cut(f, "=")
		percent, err := strconv.Atoi(strings.TrimSuffix(share, "%"))
		if !ok || module == "" || err != nil || percent < 0 || percent > 100 {
			return nil, clierr.Usagef(fmt.Errorf("--canary %q is not MODULE=PERCENT", f),
				"name the canary's .wasm file or OCI reference and its share of the objects, 0 to 100, e.g. --canary v2/handlers.wasm=10")
		}
		out = append(out, host.Canary{Module: module, Percent: percent})
	}
	return out, nil
}

// applyWebhookFlags puts the webhook flags that were given over the
// settings.
func (o *runOptions) applyWebhookFlags(cmd *cobra.Command, s *settings.Settings) {
	set := func(flag string, value string, dst *string) {
		if cmd.Flags().Changed(flag) {
			*dst = value
		}
	}
	set("webhook-listen", o.webhookListen, &s.Admission.Listen)
	set("webhook-host", o.webhookHost, &s.Admission.Host)
	set("webhook-cert-dir", o.webhookCertDir, &s.Admission.CertDir)
	set("webhook-managed", o.webhookManaged, &s.Admission.Managed)
	set("webhook-ca-dump", o.webhookCADump, &s.Admission.CADump)
	set("webhook-service", o.webhookService, &s.Admission.Service)
	set("webhook-cert-secret", o.webhookCertSecret, &s.Admission.CertSecret)
}

// runSettings are the settings of run: the defaults, with the compile cache
// in the user's cache folder, then the config file (when named), then the
// environment ($KOPF_WASM_CACHE). A config file that cannot be read or
// holds a bad key or value is a usage error naming the key.
func runSettings(config string) (settings.Settings, error) {
	s := settings.Default()
	s.Wasm.CacheDir = userWasmCacheDir()
	if config != "" {
		var err error
		if s, err = settings.ReadFile(config, s); err != nil {
			return s, clierr.Usagef(err, "")
		}
	}
	if root := os.Getenv("KOPF_WASM_CACHE"); root != "" {
		s.Wasm.CacheDir = filepath.Join(root, "wasm")
	}
	return s, nil
}

// offlineSettings are the settings of the commands that load a module
// without a cluster (build, inspect, invoke, rbac): the defaults with run's
// compile cache, so that a module compiled once loads in milliseconds.
func offlineSettings() *settings.Settings {
	s, _ := runSettings("") // without a file, nothing to fail
	return &s
}

// userWasmCacheDir is the default folder of compiled modules, in the
// user's cache folder; "" (no disk cache) when that is not known.
func userWasmCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "kopf-wasm", "wasm")
}
