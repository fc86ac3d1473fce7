// Package wasmrt is the sandbox that runs handler modules: it compiles a
// module once, keeps a small pool of instances of it, and calls its exports
// under limits. It is the only package of the host that imports wazero and
// Extism's go-sdk, and so the only one that touches wasm memory.
//
// The reactor (through execution) calls it: [Runtime.Load] turns the bytes
// of a .wasm file into a [Module] with a validated [abi.Manifest], and
// [Module.Handle] runs one handler: an [abi.Request] in, an [abi.Response]
// out. wasmrt calls Extism's go-sdk, which supplies the extism:host/env
// kernel that go-pdk guests import, and serves the host functions of
// [abi.HostNamespace]. The work behind those host functions (Kubernetes
// requests, events, indices, daemon stops) is done by a [Host] that the
// caller passes with each call, so wasmrt knows nothing of Kubernetes; it
// only checks a guest's Kubernetes requests against the permissions its
// manifest declared.
//
// # Limits
//
// Every call runs under [Options.Timeout] (the instance is closed when it
// passes), [Options.MemoryLimitPages] and [Options.MaxOutputBytes]. An
// instance serves one call at a time; a module has at most
// [Options.PoolSize] of them, and callers wait for a free one. A guest that
// loops, traps, panics, runs out of memory, exits or returns something that
// is not a response gives a [*CallError] whose [Kind] says which; the
// instance is discarded when it may be broken, and the host keeps serving.
//
// # Compilation
//
// Modules are compiled once per sha256 digest, also when several loads of
// the same bytes race, and with [Options.CacheDir] the native code is kept
// on disk across restarts (wazero's compilation cache).
package wasmrt
