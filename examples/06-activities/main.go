// Command 06-activities shows module-level activities: a startup handler
// that runs before the host watches anything, and a cleanup handler that
// runs when the host stops. Each records itself in the ConfigMap
// "activities" of the namespace given as the handlers' param. Two probe
// handlers answer on the liveness endpoint (-L): the module's version, and
// when the startup handler ran, read from the ConfigMap (the probe fails
// while the ConfigMap is missing).
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

// namespace is where the ConfigMap goes; the end-to-end test runs the module
// there.
const namespace = "ex-activities"

func init() {
	kopf.Module("activities", "0.1.0")
	kopf.Permit("", "configmaps", "get", "create", "patch")
	kopf.OnStartup(record("started"), kopf.ID("startup_fn"), kopf.Param(namespace))
	kopf.OnCleanup(record("stopped"), kopf.ID("cleanup_fn"), kopf.Param(namespace))
	kopf.OnProbe(func(*kopf.Context) (any, error) { return "0.1.0", nil }, kopf.ID("version"))
	kopf.OnProbe(startedProbe, kopf.ID("started"), kopf.Param(namespace))
	// An activity alone serves no resource; a handler makes the host watch one.
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn, kopf.ID("create_fn"))
}

// record returns an activity handler that stamps key in the ConfigMap with
// server-side apply (its field manager is the key, so the two stamps do not
// take each other's fields away).
func record(key string) kopf.Handler {
	return func(ctx *kopf.Context) (any, error) {
		ns, _ := ctx.Param().(string)
		cm := kopf.Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "activities", "namespace": ns},
			"data":     map[string]any{key: time.Now().UTC().Format(time.RFC3339)}}
		_, err := ctx.Client("", "v1", "configmaps").Namespace(ns).FieldManager("activities-" + key).Apply(cm)
		if err == nil {
			ctx.Logger().Info("activity recorded", "activity", ctx.Activity(), "key", key)
		}
		return nil, err
	}
}

// startedProbe answers when the startup handler ran, and fails when the
// ConfigMap that says so is gone.
func startedProbe(ctx *kopf.Context) (any, error) {
	ns, _ := ctx.Param().(string)
	cm, err := ctx.Client("", "v1", "configmaps").Namespace(ns).Get("activities")
	if err != nil {
		return nil, err
	}
	return cm.String("data.started"), nil
}

func createFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "created"}, nil
}

func main() {}
