// Command canaryv1 is version 1 of the module the canary and shadow tests
// roll out: its create handler says which version handled an object (its
// result), creates a ConfigMap named after the object and the version and
// posts an Event; its timer stamps the object with the version and the time
// after a call of 1.5 s that no stop request shortens; its resume handler stamps
// the object too. Every write names the version, so an audit log tells
// which version made it, and when.
package main

import (
	"strconv"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const version = "v1"

func init() {
	kopf.Module("canary", "1.0.0")
	kopf.Permit("", "configmaps", "create")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn, kopf.ID("create_fn"))
	kopf.Timer("kopf.dev", "v1", "kopfexamples", tick, kopf.ID("tick"), kopf.Interval(time.Second))
	kopf.OnResume("kopf.dev", "v1", "kopfexamples", resumeFn, kopf.ID("resume_fn"))
}

func createFn(ctx *kopf.Context) (any, error) {
	cm := kopf.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": ctx.Name() + "-" + version, "namespace": ctx.Namespace()},
		"data":     map[string]any{"version": version}}
	if _, err := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace()).Create(cm); err != nil {
		return nil, err
	}
	if err := ctx.PostEvent("Normal", "Handled", "handled by "+version); err != nil {
		return nil, err
	}
	return map[string]any{"version": version}, nil
}

func tick(ctx *kopf.Context) (any, error) {
	time.Sleep(1500 * time.Millisecond) // a long call: a moved object's new version must wait for it
	// A new value each run: every run is a write.
	ctx.Patch().Set("metadata.annotations.canary-timer", version+"-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	return nil, nil
}

func resumeFn(ctx *kopf.Context) (any, error) {
	ctx.Patch().Set("metadata.annotations.resumed-by", version)
	return nil, nil
}

func main() {}
