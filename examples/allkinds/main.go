// Command allkinds is one operator with every handler kind but convert,
// the same in every guest language (examples/allkinds.md is the contract;
// examples/rust/allkinds, examples/assemblyscript/allkinds and
// examples/python/allkinds are the others). The polyglot end-to-end test
// (internal/polyglottest, TestAllKinds) runs each language's module on a
// real control plane and asserts the same outcomes. It also builds with
// TinyGo (hack/guest-build.sh tinygo examples/allkinds OUT).
package main

import (
	"fmt"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

var examples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}

func init() {
	kopf.Module("allkinds", "0.1.0")
	kopf.OnStartup(startupFn, kopf.ID("startup_fn"))
	kopf.OnCleanup(cleanupFn, kopf.ID("cleanup_fn"))
	examples.OnCreate(createFn, kopf.ID("create_fn"))
	// A callable label filter: objects labelled skip=yes are not updated.
	examples.OnUpdate(updateFn, kopf.ID("update_fn"), kopf.Labels(map[string]any{"skip": notYes}))
	examples.OnField(fieldFn, kopf.ID("field_fn"), kopf.Field("spec.field"))
	examples.OnDelete(deleteFn, kopf.ID("delete_fn"))
	examples.OnResume(resumeFn, kopf.ID("resume_fn"))
	examples.OnEvent(eventFn, kopf.ID("event_fn"))
	examples.Timer(timerFn, kopf.ID("timer_fn"), kopf.Interval(time.Second))
	examples.Daemon(daemonFn, kopf.ID("daemon_fn"))
	examples.Index(byField, kopf.ID("by_field"))
	kopf.OnProbe(indexSize, kopf.ID("index_size"))
	examples.OnValidate(validateFn, kopf.ID("validate_fn"))
	examples.OnMutate(mutateFn, kopf.ID("mutate_fn"))
}

func startupFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("allkinds started")
	return nil, nil
}

func cleanupFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("allkinds cleaned up")
	return nil, nil
}

// createFn posts an Event about the object and registers two
// sub-handlers, whose results land in status["create_fn/a"] and
// status["create_fn/b"].
func createFn(ctx *kopf.Context) (any, error) {
	if err := ctx.PostEvent("Normal", "AllKinds", "created"); err != nil {
		return nil, err
	}
	ctx.Subhandler("a", func(*kopf.Context) (any, error) { return "sub a", nil })
	ctx.Subhandler("b", func(*kopf.Context) (any, error) { return "sub b", nil })
	return nil, nil
}

// notYes is the callable filter of update_fn: the label is not "yes".
func notYes(value any, _ *kopf.Context) bool { return value != "yes" }

func updateFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"field": ctx.Spec()["field"]}, nil
}

func fieldFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"old": ctx.Old(), "new": ctx.New()}, nil
}

func deleteFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("deleting " + ctx.Name())
	return nil, nil
}

func resumeFn(*kopf.Context) (any, error) { return "resumed", nil }

func eventFn(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info(fmt.Sprintf("event %s %s", ctx.Event().Type, ctx.Name()))
	return nil, nil
}

// timerFn marks the object once, through the handler's patch.
func timerFn(ctx *kopf.Context) (any, error) {
	if !ctx.Status().Bool("ticked") {
		ctx.Patch().Set("status.ticked", true)
	}
	return nil, nil
}

func daemonFn(ctx *kopf.DaemonContext) (any, error) {
	ctx.Logger().Info("daemon started " + ctx.Name())
	for !ctx.SleepUntilStopped(time.Minute) {
	}
	ctx.Logger().Info("daemon stopped " + ctx.Name())
	return nil, nil
}

// byField indexes the object's name under its spec.field.
func byField(ctx *kopf.Context) (any, error) {
	return map[string]any{ctx.Spec().String("field"): ctx.Name()}, nil
}

// indexSize is the number of keys in by_field, read whole.
func indexSize(ctx *kopf.Context) (any, error) {
	return len(ctx.Index("by_field")), nil
}

func validateFn(ctx *kopf.AdmissionContext) error {
	if ctx.Spec().String("field") == "forbidden" {
		return kopf.AdmissionError{Message: "field must not be forbidden"}
	}
	return nil
}

func mutateFn(ctx *kopf.AdmissionContext) error {
	ctx.Patch().Merge(map[string]any{"metadata": map[string]any{"labels": map[string]any{"allkinds-mutated": "yes"}}})
	return nil
}

// main never runs: the host initialises the module through _initialize.
func main() {}
