// Command kopfexample is Kopf's minimal example operator as a kopf-wasm
// module: create, update and delete handlers for kopf.dev/v1 kopfexamples
// that log and return a message, which the host stores under
// status.create_fn, status.update_fn and status.delete_fn.
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o kopfexample.wasm .
package main

import (
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("kopfexample", "0.1.0")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn, kopf.ID("create_fn"))
	kopf.OnUpdate("kopf.dev", "v1", "kopfexamples", updateFn, kopf.ID("update_fn"))
	kopf.OnDelete("kopf.dev", "v1", "kopfexamples", deleteFn, kopf.ID("delete_fn"))
}

func createFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("And here we are! Creating", "spec", ctx.Spec())
	return map[string]any{"message": "hello world"}, nil
}

func updateFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("Updating", "diff", len(ctx.Diff()))
	return map[string]any{"message": "updated"}, nil
}

func deleteFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("Deleting", "name", ctx.Name())
	return map[string]any{"message": "deleted"}, nil
}

// main never runs: a c-shared wasm module is a reactor, initialised by the
// host through _initialize, which runs the init functions above.
func main() {}
