// Package host is the kopf-wasm host as an embeddable Go library: it loads
// handler modules (WebAssembly, Extism calling convention, see the abi
// module), watches the Kubernetes resources their manifests select, and runs
// Kopf's processing cycle for every change — cause detection, handler calls
// in sandboxed instances, persistence of results and progress on the object,
// retries, finalizers, timers, daemons and admission webhooks.
//
// The command cmd/kopf-wasm is a thin CLI over this package. Everything else
// lives under host/internal/, in layers that an architecture test
// (internal/archtest) enforces: only host/internal/kube talks to the
// Kubernetes API, only host/internal/wasmrt touches wasm memory.
//
// The package holds documentation only for now; later issues fill it.
package host
