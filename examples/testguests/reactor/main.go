// Command reactor is the module the reactor's end-to-end tests run: its
// handlers on kopf.dev/v1 kopfexamples behave as each object's spec asks,
// so one module covers successes, every kind of failure, field handlers,
// filters, resume and a write that conflicts with the host's own.
//
// spec.create says what the create handler does: "" succeeds; "temporary"
// fails with a TemporaryError of spec.delay seconds until retry reaches
// spec.times; "permanent" and "arbitrary" fail so; "loop" never returns;
// "conflict" changes the object through the API while the host handles it.
// spec.fieldfail "always" makes the field handler of spec.field fail
// temporarily on every attempt.
package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func init() {
	kopf.Module("reactor", "0.1.0")
	kopf.Permit(group, plural, "get", "patch")
	kopf.OnCreate(group, version, plural, createFn, kopf.ID("create_fn"))
	kopf.OnUpdate(group, version, plural, updateFn, kopf.ID("update_fn"))
	kopf.OnField(group, version, plural, fieldFn, kopf.ID("field_fn"), kopf.Field("spec.field"))
	kopf.OnCreate(group, version, plural, labelledFn, kopf.ID("labelled_fn"),
		kopf.Labels(map[string]any{"mode": "labelled"}))
	kopf.OnCreate(group, version, plural, limitedFn, kopf.ID("limited_fn"),
		kopf.Labels(map[string]any{"mode": "limited"}), kopf.Retries(2))
	kopf.OnResume(group, version, plural, resumeFn, kopf.ID("resume_fn"))
	kopf.OnDelete(group, version, plural, deleteFn, kopf.ID("delete_fn"))
	kopf.OnEvent(group, version, plural, eventFn, kopf.ID("event_fn"),
		kopf.Labels(map[string]any{"mode": "events"}))
	kopf.Permit("", "configmaps", "get", "create", "patch")
	// Built-in resources, namespaced and cluster-scoped.
	kopf.Permit("", "namespaces", "get", "patch")
	kopf.OnCreate("", "v1", "configmaps", markFn, kopf.ID("configmap_fn"),
		kopf.Labels(map[string]any{"kopf-wasm-test": kopf.Present}))
	kopf.OnCreate("", "v1", "namespaces", markFn, kopf.ID("namespace_fn"),
		kopf.Labels(map[string]any{"kopf-wasm-test": kopf.Present}))
	kopf.OnStartup(activityFn("startup"), kopf.ID("startup_fn"))
	kopf.OnCleanup(activityFn("cleanup"), kopf.ID("cleanup_fn"))
}

// markFn marks a built-in object with an annotation (they have no status
// to store a result in).
func markFn(ctx *kopf.Context) (any, error) {
	ctx.Patch().Set("metadata.annotations.handled-by", ctx.Handler())
	return nil, nil
}

// eventFn records the types of the watch events it saw.
func eventFn(ctx *kopf.Context) (any, error) {
	typ := ctx.Event().Type
	if typ == "" {
		typ = "LISTED"
	}
	return map[string]any{"last": typ}, nil
}

// activityFn returns an activity handler that marks the configmap
// default/reactor-activities with its name, so tests see it ran.
func activityFn(name string) kopf.Handler {
	return func(ctx *kopf.Context) (any, error) {
		cm := kopf.Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "reactor-activities", "namespace": "default"},
			"data":     map[string]any{name: "done"}}
		_, err := ctx.Client("", "v1", "configmaps").Namespace("default").FieldManager("reactor-" + name).Apply(cm)
		return nil, err
	}
}

func createFn(ctx *kopf.Context) (any, error) {
	countRun(ctx, "create-runs")
	spec := ctx.Spec()
	switch spec.String("create") {
	case "temporary":
		if float64(ctx.Retry()) < number(spec, "times") {
			delay := time.Duration(number(spec, "delay") * float64(time.Second))
			return nil, kopf.TemporaryError{Message: fmt.Sprintf("not yet at retry %d", ctx.Retry()), Delay: delay}
		}
	case "permanent":
		return nil, kopf.PermanentError{Message: "cannot ever work"}
	case "arbitrary":
		return nil, errors.New("something unexpected")
	case "loop":
		for {
		}
	case "conflict":
		if _, touched := ctx.Labels()["touched"]; !touched {
			_, err := ctx.Client(group, version, plural).Namespace(ctx.Namespace()).
				Patch(ctx.Name(), kopf.MergePatch, map[string]any{"metadata": map[string]any{"labels": map[string]any{"touched": "yes"}}})
			if err != nil {
				return nil, err
			}
		}
	}
	return map[string]any{"message": "created", "retry": ctx.Retry(), "finalized": finalized(ctx)}, nil
}

// finalized tells whether the object already had the host's finalizer when
// the handler ran: it should, the host adds it in a cycle of its own first.
func finalized(ctx *kopf.Context) bool {
	list, _ := ctx.Meta()["finalizers"].([]any)
	return slices.Contains(list, any("kopf.zalando.org/KopfFinalizerMarker"))
}

// countRun counts the handler's successful runs in an annotation, so that
// tests see whether a finished handler ran again.
func countRun(ctx *kopf.Context, key string) {
	n, _ := strconv.Atoi(ctx.Annotations()[key])
	ctx.Patch().Set("metadata.annotations."+key, strconv.Itoa(n+1))
}

func number(o kopf.Object, key string) float64 {
	v, _ := o.Get(key)
	f, _ := v.(float64)
	return f
}

func updateFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "updated"}, nil
}

// fieldFn reports the field's old and new values; with spec.fieldfail
// "always" it fails temporarily every time (a child it cannot patch, say).
func fieldFn(ctx *kopf.Context) (any, error) {
	if ctx.Spec().String("fieldfail") == "always" {
		return nil, kopf.TemporaryError{Message: "cannot sync the field", Delay: 500 * time.Millisecond}
	}
	return map[string]any{"old": ctx.Old(), "new": ctx.New()}, nil
}

func labelledFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "labelled"}, nil
}

func limitedFn(ctx *kopf.Context) (any, error) {
	return nil, kopf.TemporaryError{Message: "always failing", Delay: 200 * time.Millisecond}
}

func resumeFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "resumed"}, nil
}

func deleteFn(ctx *kopf.Context) (any, error) {
	switch ctx.Spec().String("delete") {
	case "temporary":
		if ctx.Retry() < 1 {
			return nil, kopf.TemporaryError{Message: "not yet", Delay: time.Second}
		}
	case "always": // fails for ever: the object waits for a hand to release it
		return nil, kopf.TemporaryError{Message: "the backend is unreachable", Delay: time.Second}
	case "permanent":
		return nil, kopf.PermanentError{Message: "the backend refused"}
	}
	return nil, nil
}

func main() {}
