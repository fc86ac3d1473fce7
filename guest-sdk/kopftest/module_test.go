package kopftest_test

import (
	"errors"
	"fmt"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

// The module these tests run, registered as an author would.
func init() {
	kopf.Module("suite", "1.0.0")
	kopf.Permit("", "configmaps", "get", "list", "create", "update", "patch", "delete")
	kopf.Permit("", "pods", "get")
	kopf.OnField("kopf.dev", "v1", "kopfexamples", sizeFn, kopf.Field("spec.size"))
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", configmaps)
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", deletePod)
	kopf.OnResume("kopf.dev", "v1", "kopfexamples", countCalls)
	kopf.Daemon("kopf.dev", "v1", "kopfexamples", monitor)
	kopf.OnValidate("kopf.dev", "v1", "kopfexamples", check)
	kopf.OnEvent("kopf.dev", "v1", "kopfexamples", watch)
	kopf.Index("kopf.dev", "v1", "kopfexamples", byNamespace)
	kopf.Index("kopf.dev", "v1", "kopfexamples", byPlace)
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", neighbours, kopf.Labels(map[string]any{"neighbours": kopf.Present}))
	kopf.OnUpdate("kopf.dev", "v1", "kopfexamples", siblings, kopf.When(isLabelled))
	kopf.OnStartup(startup)
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", flaky)
}

func sizeFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"reason": ctx.Reason(), "old": ctx.Old(), "new": ctx.New(), "diff": ctx.Diff()}, nil
}

// configmaps walks the object store through every verb.
func configmaps(ctx *kopf.Context) (any, error) {
	cms := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace())
	child := kopf.Object{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "1"}}
	ctx.Adopt(child)
	created, err := cms.Create(child)
	if err != nil {
		return nil, err
	}
	name := created.String("metadata.name")
	if _, err := cms.Create(created); !errors.Is(err, kopf.ErrAlreadyExists) {
		return nil, fmt.Errorf("second create: %v", err)
	}
	if _, err := cms.Patch(name, kopf.MergePatch, map[string]any{"data": map[string]any{"k": "2", "x": "y"}}); err != nil {
		return nil, err
	}
	stale := kopf.Object{"metadata": map[string]any{"name": name, "resourceVersion": created.String("metadata.resourceVersion")}}
	if _, err := cms.Update(stale); !errors.Is(err, kopf.ErrConflict) {
		return nil, fmt.Errorf("stale update: %v", err)
	}
	applied, err := cms.Apply(kopf.Object{"metadata": map[string]any{"name": "applied"}, "data": map[string]any{"a": "b"}})
	if err != nil {
		return nil, err
	}
	listed, err := cms.List(kopf.ListOptions{LabelSelector: "app=demo"})
	if err != nil {
		return nil, err
	}
	if err := cms.Delete("applied"); err != nil {
		return nil, err
	}
	if _, err := cms.Get("applied"); !errors.Is(err, kopf.ErrNotFound) {
		return nil, fmt.Errorf("get after delete: %v", err)
	}
	got, err := cms.Get(name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": name, "data": got.Map("data"), "listed": len(listed),
		"applied": applied.String("metadata.name"), "owner": got.String("metadata.namespace")}, nil
}

func deletePod(ctx *kopf.Context) (any, error) {
	return nil, ctx.Client("", "v1", "pods").Namespace("default").Delete("p")
}

func countCalls(ctx *kopf.Context) (any, error) {
	memo := ctx.Memo()
	n, _ := memo["calls"].(float64)
	memo["calls"] = n + 1
	return n + 1, nil
}

func monitor(ctx *kopf.Context) (any, error) {
	rounds := 0
	for !ctx.Stopped() {
		rounds++
		ctx.SleepUntilStopped(10 * time.Second)
	}
	return map[string]any{"rounds": rounds, "reason": ctx.StopReason()}, nil
}

func check(ctx *kopf.Context) (any, error) {
	adm := ctx.Admission()
	if adm.Operation == "UPDATE" {
		return nil, kopf.AdmissionError{Message: "immutable", Code: 403}
	}
	adm.Warnings = append(adm.Warnings, "checked "+adm.Operation)
	return nil, nil
}

func watch(ctx *kopf.Context) (any, error) { return ctx.Event().Type, nil }

func byNamespace(ctx *kopf.Context) (any, error) {
	return map[string]any{ctx.Namespace(): ctx.Name()}, nil
}

func isLabelled(ctx *kopf.Context) bool { return ctx.Labels()["app"] == "demo" }

func siblings(ctx *kopf.Context) (any, error) {
	looked, err := ctx.IndexLookup("byNamespace", ctx.Namespace())
	if err != nil {
		return nil, err
	}
	return map[string]any{"lookup": looked, "index": ctx.Index("byNamespace")}, nil
}

// byPlace is an index keyed by a tuple, Kopf's {(namespace, name): ...}.
func byPlace(ctx *kopf.Context) (any, error) {
	return map[string]any{kopf.IndexKey(ctx.Namespace(), ctx.Spec().String("place")): ctx.Name()}, nil
}

// neighbours looks its place up in byPlace, by tuple and in the whole index.
func neighbours(ctx *kopf.Context) (any, error) {
	looked, err := ctx.IndexLookup("byPlace", []any{ctx.Namespace(), ctx.Spec().String("place")})
	if err != nil {
		return nil, err
	}
	return map[string]any{"lookup": looked, "whole": ctx.Index("byPlace")[kopf.IndexKey(ctx.Namespace(), ctx.Spec().String("place"))]}, nil
}

func startup(ctx *kopf.Context) (any, error) { return ctx.Activity(), nil }

func flaky(ctx *kopf.Context) (any, error) {
	ctx.Patch().Set("status.tries", ctx.Retry()+1)
	return "never", kopf.TemporaryError{Message: "not yet", Delay: 2500 * time.Millisecond}
}
