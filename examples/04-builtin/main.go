// Command 04-builtin is an example operator on a built-in resource: it
// handles ConfigMaps labelled example.kopf.dev/count=yes, counts their keys
// and writes the count into an annotation of the ConfigMap (ConfigMaps have
// no status, so the host keeps its progress and results in annotations).
package main

import (
	"strconv"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const label = "example.kopf.dev/count"

func init() {
	kopf.Module("builtin", "0.1.0")
	counted := kopf.Labels(map[string]any{label: "yes"})
	kopf.OnCreate("", "v1", "configmaps", count, kopf.ID("count"), counted)
	kopf.OnUpdate("", "v1", "configmaps", count, kopf.ID("recount"), counted)
	kopf.OnDelete("", "v1", "configmaps", gone, kopf.ID("gone"), counted)
}

// count annotates the ConfigMap with the number of its data keys.
func count(ctx *kopf.Context) (any, error) {
	data := ctx.Body().Map("data")
	ctx.Patch().SetKeys([]string{"metadata", "annotations", "example.kopf.dev/keys"}, strconv.Itoa(len(data)))
	ctx.Logger().Info("counted keys", "configmap", ctx.Name(), "keys", len(data))
	return nil, nil
}

// gone logs the deletion. The host holds the ConfigMap with a finalizer
// until it has run.
func gone(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("configmap deleted", "configmap", ctx.Name())
	return nil, nil
}

// main never runs: the host initialises the module through _initialize.
func main() {}
