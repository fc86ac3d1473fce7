package kopftest_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

func init() {
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", itemsFn)
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", explicitFn)
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", filteredFn)
}

// filteredFn registers sub-handlers behind filters: only "labelled" and
// "always" match the example object (labelled app=demo).
func filteredFn(ctx *kopf.Context) (any, error) {
	ok := func(sub *kopf.Context) (any, error) { return sub.Handler(), nil }
	ctx.Subhandler("labelled", ok, kopf.Labels(map[string]any{"app": "demo"}))
	ctx.Subhandler("unlabelled", ok, kopf.Labels(map[string]any{"app": kopf.Absent}))
	ctx.Subhandler("annotated", ok, kopf.Annotations(map[string]any{"x": kopf.Present}))
	ctx.Subhandler("never", ok, kopf.When(func(*kopf.Context) bool { return false }))
	ctx.Subhandler("always", ok, kopf.When(func(c *kopf.Context) bool { return c.Reason() == kopf.ReasonCreate }))
	return "parent", nil
}

// runs counts the calls of each sub-handler across cycles.
var runs = map[string]int{}

// itemsFn registers one sub-handler per item of spec.items; an item
// "flaky" fails once, "bad" fails permanently.
func itemsFn(ctx *kopf.Context) (any, error) {
	items, _ := ctx.Spec()["items"].([]any)
	for _, it := range items {
		item := fmt.Sprint(it)
		ctx.Subhandler(item, func(sub *kopf.Context) (any, error) {
			runs[sub.Handler()]++
			switch {
			case item == "flaky" && sub.Retry() == 0:
				return nil, kopf.TemporaryError{Message: "not yet"}
			case item == "bad":
				return nil, kopf.PermanentError{Message: "never"}
			}
			sub.Patch().Set("status.seen."+item, sub.Retry())
			return map[string]any{"item": item, "retry": sub.Retry()}, nil
		}, kopf.Retries(3))
	}
	return map[string]any{"items": len(items)}, nil
}

// explicitFn runs its sub-handler with Execute and goes on only once it
// is done.
func explicitFn(ctx *kopf.Context) (any, error) {
	ctx.Subhandler("first", func(sub *kopf.Context) (any, error) {
		if sub.Retry() < 2 {
			return nil, kopf.TemporaryError{Message: "wait"}
		}
		return "done", nil
	})
	if err := ctx.Execute(); err != nil {
		return nil, err
	}
	return "after", nil
}

func itemsObject(items ...any) map[string]any {
	o := example(1)
	o["spec"].(map[string]any)["items"] = items
	return o
}

func TestSubhandlersRunUntilAllAreFinished(t *testing.T) {
	clear(runs)
	h := kopftest.New(t)
	cycles := h.RunCycles("itemsFn", itemsObject("a", "flaky", "bad"), nil, 10)
	if len(cycles) != 2 {
		t.Fatalf("%d cycles, want 2 (flaky retried once)", len(cycles))
	}
	first := cycles[0]
	if !first.Pending() || !errors.As(first.Err, new(kopf.HandlerChildrenRetry)) || first.Value != nil {
		t.Fatalf("first cycle: pending=%v err=%v value=%v; want unfinished, no result", first.Pending(), first.Err, first.Value)
	}
	kids := first.Children()
	if len(kids) != 3 || kids["itemsFn/a"].Err != nil || kids["itemsFn/a"].Parent != "itemsFn" ||
		!errors.As(kids["itemsFn/flaky"].Err, new(kopf.TemporaryError)) || !errors.As(kids["itemsFn/bad"].Err, new(kopf.PermanentError)) {
		t.Fatalf("first cycle's children: %+v", kids)
	}
	if kids["itemsFn/a"].Options.Retries != 3 {
		t.Errorf("options not reported: %+v", kids["itemsFn/a"].Options)
	}
	if got := fmt.Sprint(first.Merge()); got != "map[status:map[seen:map[a:0]]]" {
		t.Errorf("sub-handlers share the parent's patch: %s", got)
	}
	last := cycles[1]
	if last.Err != nil || fmt.Sprint(last.Value) != "map[items:3]" {
		t.Fatalf("last cycle: err=%v value=%v; want the parent's result", last.Err, last.Value)
	}
	kids = last.Children()
	if kids["itemsFn/a"].Called || kids["itemsFn/bad"].Called || !kids["itemsFn/flaky"].Called ||
		fmt.Sprint(kids["itemsFn/flaky"].Value) != "map[item:flaky retry:1]" {
		t.Errorf("last cycle: finished sub-handlers ran again or flaky did not: %+v", kids)
	}
	if runs["itemsFn/a"] != 1 || runs["itemsFn/bad"] != 1 || runs["itemsFn/flaky"] != 2 {
		t.Errorf("runs = %v", runs)
	}
}

func TestSubhandlersSleepingOrUsedUpAreNotCalled(t *testing.T) {
	clear(runs)
	h := kopftest.New(t)
	req := h.Request("itemsFn", itemsObject("a", "b"), nil)
	req.Subhandlers = []abi.SubhandlerState{{ID: "itemsFn/a", Retry: 1, Sleeping: true}, {ID: "itemsFn/b", Retry: 3}}
	res, err := h.Call(req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pending() || runs["itemsFn/a"] != 0 || runs["itemsFn/b"] != 0 {
		t.Fatalf("pending=%v runs=%v: want the sleeping one awaited and the used-up one not called", res.Pending(), runs)
	}
}

func TestExecuteHoldsTheRestOfTheHandler(t *testing.T) {
	h := kopftest.New(t)
	cycles := h.RunCycles("explicitFn", example(1), nil, 10)
	if len(cycles) != 3 {
		t.Fatalf("%d cycles, want 3", len(cycles))
	}
	for _, c := range cycles[:2] {
		if !c.Pending() || c.Value != nil {
			t.Fatalf("an early cycle returned %v (%v)", c.Value, c.Err)
		}
	}
	if got := cycles[2]; got.Err != nil || got.Value != "after" || got.Children()["explicitFn/first"].Value != "done" {
		t.Fatalf("last cycle: %v %v %+v", got.Value, got.Err, got.Children())
	}
}

func TestSubhandlerFilters(t *testing.T) {
	h := kopftest.New(t)
	res := h.Run("filteredFn", example(1), nil)
	if res.Err != nil || res.Value != "parent" {
		t.Fatalf("parent: %v %v", res.Value, res.Err)
	}
	kids := res.Children()
	if len(kids) != 2 || kids["filteredFn/labelled"].Value != "filteredFn/labelled" || kids["filteredFn/always"].Value != "filteredFn/always" {
		t.Errorf("children = %+v; want only labelled and always, run", kids)
	}
}
