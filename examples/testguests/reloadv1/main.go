// Command reloadv1 is version 1 of the module the hot-reload test swaps:
// its create handler says which version handled an object and counts its
// runs in an annotation.
package main

import (
	"strconv"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const version = "v1"

func init() {
	kopf.Module("reload", "1.0.0")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn, kopf.ID("create_fn"))

}

func createFn(ctx *kopf.Context) (any, error) {
	n, _ := strconv.Atoi(ctx.Annotations()["create-runs"])
	ctx.Patch().Set("metadata.annotations.create-runs", strconv.Itoa(n+1))
	return map[string]any{"version": version}, nil
}

func main() {}
