// Package host is the kopf-wasm host as an embeddable Go library: it loads
// handler modules (WebAssembly, Extism calling convention, see the abi
// module), watches the Kubernetes resources their manifests select, and runs
// Kopf's processing cycle for every change — cause detection, handler calls
// in sandboxed instances, persistence of results and progress on the object,
// retries and finalizers.
//
// # Entry points
//
//   - [Run] serves a set of modules against a cluster until its context ends:
//     it loads the modules, connects (failing early, in one line, when the
//     kubeconfig is unusable or the cluster does not answer) and runs the
//     operator. [Options] says which modules, which cluster (a kubeconfig
//     or a *rest.Config), which namespaces, which servers ([MetricsOptions],
//     [HealthOptions]) and with which [settings.Settings].
//   - [Inspect] reads a module's manifest without a cluster.
//   - [Push] and [Pull] ship modules as OCI artifacts (the CNCF wasm layout)
//     and keep pulled ones in a disk cache by digest; [Run] pulls module
//     arguments that are references ([IsReference]) through the same cache.
//   - [Invoke] calls one handler of a module on an object, offline, with the
//     request the operator would build for it, and returns the response.
//   - [Freeze] and [Unfreeze] pause and resume the hosts of a peering.
//   - [Preinitialize] snapshots a module after its initialisation (how
//     `kopf-wasm build` makes Python modules start fast).
//
// The command cmd/kopf-wasm is a thin CLI over these functions.
//
// # What is served today
//
// [Run] serves every handler kind of ABI v1. The operator
// (host/internal/reactor) serves create, update, delete, resume, field and
// event handlers, indices (every resource handler of a module waits until
// its indexes hold every object), timers and daemons, and startup and
// cleanup activities; the liveness endpoint ([HealthOptions.Liveness])
// answers the probe handlers; validating and mutating admission webhooks
// and conversion webhooks are served over HTTPS (settings.Admission);
// Prometheus metrics ([Options.Metrics]) and Kubernetes' /healthz and
// /readyz ([HealthOptions.ProbeBindAddress]) are served when asked for.
// [Invoke] calls any of them offline.
//
// Several hosts on one cluster: [Run] takes part in Kopf's peering
// (settings.Peering: keep-alives in the KopfPeering/ClusterKopfPeering
// objects, pausing for peers of a higher or the same priority) unless
// standalone, or competes for a Lease with settings.LeaderElection; both
// pause and resume handling through one host-wide gate (host/internal/gate),
// and the liveness endpoint says why a host is paused. [Freeze] and
// [Unfreeze] write and remove a peer record by hand (kopf-wasm freeze and
// resume). See docs/peering.md.
//
// While it runs, [Run] reloads module files that change and modules whose
// OCI tag moves, and (with [Options.ModuleResources]) the modules that
// Module resources name: a new version is loaded in the background and
// swapped in between processing cycles; one that does not load leaves the
// old one serving.
//
// # Layers
//
// This package is a thin layer: it checks the options, connects, loads the
// modules and hands them to host/internal/operator, whose spawn starts
// every engine (Kopf's spawn_tasks). Everything a running host does lives
// under host/internal/, in layers that an architecture test
// (internal/archtest) enforces: only host/internal/kube talks to the
// Kubernetes API, only host/internal/wasmrt touches wasm memory, and
// nothing under host/internal imports this package. What only the CLI
// needs (image building, cache pruning, webhook names for manifests) lives
// in the module's root internal/ packages, which cmd/ and host/ share.
package host
