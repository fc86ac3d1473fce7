// Package kopf is the Go guest SDK of kopf-wasm: operator authors write
// Kubernetes handlers with Kopf's programming model, build them into a
// WebAssembly module, and the kopf-wasm host runs them.
//
// An author registers handlers in an init function (a wasm reactor never
// runs main) and builds with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o handlers.wasm .
//
// For example:
//
//	func init() {
//		kopf.Module("kopfexample", "1.0.0")
//		kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn)
//	}
//
//	func createFn(ctx *kopf.Context) (any, error) {
//		ctx.Logger().Info("creating", "spec", ctx.Spec())
//		return map[string]any{"message": "hello world"}, nil
//	}
//
//	func main() {}
//
// Registration builds the module's abi.Manifest (handlers with their
// selectors, filters and options, and the permissions the module needs).
// The host calls a handler with an abi.Request; the handler sees it through
// a [Context] (Kopf's kwargs: body, spec, meta, status, old, new, diff,
// retry, memo, ...), fills a [Patch], and returns a result (stored under
// status.<handler id>) and an error: nil, [TemporaryError],
// [PermanentError], [AdmissionError] or any other (an arbitrary error,
// which the handler's errors mode decides about). A panic is an arbitrary
// error too.
//
// Handlers reach the host through the Context: structured logs
// ([Context.Logger]), Kubernetes Events ([Context.PostEvent]), Kubernetes
// API requests ([Context.Client]) limited to the permissions the module
// declared with [Permit], index look-ups and, for daemons and timers, the
// stop flag. The wasm glue lives in an internal package behind the wasip1
// build tag; on other platforms package kopftest plays the host, so that
// handlers are unit-tested with plain go test.
//
// A changing handler may register sub-handlers ([Context.Subhandler],
// [Context.Execute]), as Kopf's @kopf.subhandler: a module keeps no
// closures between calls, so the host calls the handler again in every
// processing cycle until its sub-handlers are finished, and the SDK runs
// the due ones within that call (see subhandlers.go and docs/subhandlers.md).
//
// Typed access keeps the maps: [Decode] converts a decoded value to a Go
// type, [Context.DecodeSpec] and its siblings decode the object's parts
// from the request's JSON, [Client.GetInto] and [Client.ListInto] decode
// replies, and [Object.Int], [Object.Float] and [IntOf] read numbers
// (float64 in maps). A [Resource] value registers many handlers for one
// resource; [OnValidate], [OnMutate] and [Daemon] also take handlers of an
// [AdmissionContext] or a [DaemonContext], which show only what those
// kinds get. [Temporary] and [Permanent] wrap an error for errors.Is/As.
//
// The pure helpers [Adopt], [AppendOwnerReference], [Label], [Harmonize]
// and [AdjustNamespace] build parent–child hierarchies as Kopf's do.
package kopf
