// Package abi is the contract between the kopf-wasm host and handler modules:
// the names of the exports and host functions, and the JSON documents that
// cross the boundary. It imports the standard library only, so that every
// guest (whatever its language) and the host can agree on one definition.
//
// # Calling convention
//
// A module is an Extism plug-in: it imports the Extism kernel
// (extism:host/env) and moves bytes through kernel-allocated memory blocks.
// Payloads are JSON documents defined in this package. A Go guest built with
// `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared` is a WASI reactor;
// the host runs its _initialize export once per instance before any call.
//
// # Call sequence
//
//  1. Load: the host calls [ExportManifest] with empty input. The guest writes
//     a [Manifest] as its output and returns 0. The host refuses the module
//     if [Manifest.Validate] fails or ABIVersion is not [Version].
//  2. Handle: for every handler call the host writes a [Request] as the input
//     of [ExportHandle]. The guest writes a [Response] and returns 0. A
//     handler's own failure (TemporaryError, PermanentError, any other error)
//     is a successful call whose [Outcome] says so; a non-zero return code, a
//     trap, a timeout, output that is not a [Response], or output larger than
//     the host's cap is a failure of the module, which the host treats as an
//     arbitrary error of the handler (its errors mode decides).
//  3. Host functions: during a call the guest may call the functions named in
//     imports.go, in the [HostNamespace] module. Each takes one i64, the
//     offset of a kernel memory block that holds the JSON request, and returns
//     one i64, the offset of a block that holds the JSON reply (0 when the
//     function has no reply). The guest owns its request block; the guest
//     owns and frees the reply block after reading it. Two more functions
//     there, [HostInputRead] and [HostOutputWrite], move the call's input
//     and output between kernel memory and the guest's own memory in one
//     call (i32 pointer and length); a guest may use them or Extism's
//     input_load/output_set, which take one call per 8 bytes.
//
// # Memory and instances
//
// The host never calls one instance from two goroutines. Instances are
// pooled and reused between calls, so a guest must not rely on global state
// surviving between calls (it may be a fresh instance) nor on it being reset
// (it may be the same one). Per-object state that must survive goes in the
// memo ([Request.Memo], [Response.Memo]); durable state goes on the object.
//
// # Errors
//
// The outcome of a handler is one of [OutcomeSuccess], [OutcomeTemporary]
// (retried after [Outcome.Delay]), [OutcomePermanent] (not retried for this
// cause) or [OutcomeError] (an arbitrary error: the handler's
// [Options.Errors] decides, temporary by default, as in Kopf). Host
// functions report failures in the reply's Error field ([HostError]); they
// never trap the guest for an expected failure.
//
// # Versioning
//
// [Version] is the major version of this contract. Within a version, changes
// only add optional JSON fields and new enum values that old peers may
// ignore; fields are never removed or retyped. A module built for another
// major version is refused at load with an error that says which SDK to
// rebuild with. Host functions live in a namespace that carries the version
// ([HostNamespace]), so a future version can be served beside this one.
//
// # Durations
//
// Durations in the manifest and in requests are JSON numbers in seconds (as
// Kopf's options are), e.g. "timeout": 30 or "delay": 0.5.
package abi
