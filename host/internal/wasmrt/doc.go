// Package wasmrt is the sandbox that runs handler modules: it compiles a
// module once, keeps a small pool of instances of it, and calls its exports
// under limits. It is the only package of the host that imports wazero, and
// so the only one that touches wasm memory.
//
// The reactor (through execution) calls it: [Runtime.Load] turns the bytes
// of a .wasm file into a [Module] with a validated [abi.Manifest], and
// [Module.Handle] runs one handler: an [abi.Request] in, an [abi.Response]
// out. wasmrt serves the host modules that guests import: WASI (wazero's),
// Extism's kernel functions (extism:host/env, which go-pdk and every Extism
// PDK call: implemented here in Go, see kernel.go, rather than through
// Extism's go-sdk, which runs its kernel as a second wasm module and costs
// a dozen wasm calls and ~220 KB of allocations per call), and the host
// functions of [abi.HostNamespace]. The work behind those host functions (Kubernetes
// requests, events, indices, daemon stops) is done by a [Host] that the
// caller passes with each call, so wasmrt knows nothing of Kubernetes; it
// only checks a guest's Kubernetes requests against the permissions its
// manifest declared.
//
// # Limits
//
// Every call runs under [Options.Timeout], [Options.MemoryLimitPages] and
// [Options.MaxOutputBytes]. To stop a guest that loops, the runtime
// rewrites each module before compiling it (package instrument): every
// loop header checks an interrupt flag, which the runtime raises when the
// call's context ends, and the guest traps. wazero's own way
// (WithCloseOnContextDone) leaves native code for Go at every loop
// iteration, which makes a standard-Go guest several times slower; it is
// used only for a module that cannot be instrumented. An
// instance serves one call at a time; a module has at most
// [Options.PoolSize] of them, and callers wait for a free one. A guest that
// loops, traps, panics, runs out of memory, exits or returns something that
// is not a response gives a [*CallError] whose [Kind] says which; the
// instance is discarded when it may be broken, and the host keeps serving.
//
// # Compilation
//
// Before compiling, the runtime takes out of a module what is particular
// to it (instrument.Split): its data segments become an image that every
// instance maps copy-on-write (image.go), and a pre-initialised module
// (a Python module: CPython with the author's files imported) also gives
// up its memory's size and its globals' values, which each instance is
// given after instantiation (start.go). What is left is compiled once per
// sha256 digest, also when several loads race: every Python module built
// from one runtime shares one compiled code. With [Options.CacheDir] the
// native code is kept on disk across restarts (wazero's compilation
// cache). After compiling, wazero's copy of the function bodies is
// released (release.go).
package wasmrt
