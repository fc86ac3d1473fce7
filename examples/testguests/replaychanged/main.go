// Command replaychanged is reloadv1 changed in one place, for the replay
// tests (kopf-wasm replay): its create handler also marks the objects
// labelled tier=gold with an annotation, so a replay of a recorded run of
// reloadv1 against it differs in exactly those objects' patches.
package main

import (
	"strconv"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const version = "v1"

func init() {
	kopf.Module("reload", "1.0.1")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn, kopf.ID("create_fn"))
}

func createFn(ctx *kopf.Context) (any, error) {
	n, _ := strconv.Atoi(ctx.Annotations()["create-runs"])
	ctx.Patch().Set("metadata.annotations.create-runs", strconv.Itoa(n+1))
	if ctx.Labels()["tier"] == "gold" {
		ctx.Patch().Set("metadata.annotations.tier-checked", "yes")
	}
	return map[string]any{"version": version}, nil
}

func main() {}
