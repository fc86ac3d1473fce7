// Command 11-subhandlers is an example operator with sub-handlers (Kopf's
// @kopf.subhandler): every KopfExample lists items in spec.items, and each
// item gets a ConfigMap <name>-<item>, adopted by the object.
//
// The create handler registers one sub-handler per item ("add-<item>");
// the update handler one per added item and one per removed item
// ("remove-<item>", which deletes the ConfigMap). Each sub-handler has its
// own id ("create_items/add-a"), progress record and retries; the host
// calls the parent again in every cycle until all its sub-handlers are
// finished, and runs only those not finished yet. Their results land in
// status.<parent/child>, the parent's once they are all done.
//
// An item named "slow-..." fails its first attempt with a TemporaryError
// (retried after 4 s), as something not ready yet would.
package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("subhandlers", "0.1.0")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", items, kopf.ID("create_items"))
	kopf.OnUpdate("kopf.dev", "v1", "kopfexamples", items, kopf.ID("update_items"))
	kopf.Permit("", "configmaps", "create", "delete")
}

// items registers a sub-handler for every item added since the old state
// and for every item removed.
func items(ctx *kopf.Context) (any, error) {
	old, now := list(ctx.Old()), list(ctx.New())
	for _, item := range now {
		if !slices.Contains(old, item) {
			ctx.Subhandler("add-"+item, add(item), kopf.Retries(5))
		}
	}
	for _, item := range old {
		if !slices.Contains(now, item) {
			ctx.Subhandler("remove-"+item, remove(item), kopf.Retries(5))
		}
	}
	return map[string]any{"items": now}, nil
}

// list reads spec.items from an essence (nil on creation).
func list(state any) []string {
	m, _ := state.(map[string]any)
	spec, _ := m["spec"].(map[string]any)
	var out []string
	arr, _ := spec["items"].([]any)
	for _, v := range arr {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

func add(item string) kopf.Handler {
	return func(ctx *kopf.Context) (any, error) {
		ctx.Logger().Info("adding item", "item", item, "retry", ctx.Retry())
		if strings.HasPrefix(item, "slow-") && ctx.Retry() == 0 {
			return nil, kopf.TemporaryError{Message: item + " is not ready yet", Delay: 4 * time.Second}
		}
		cm := kopf.Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": ctx.Name() + "-" + item},
			"data":     map[string]any{"item": item}}
		ctx.Adopt(cm)
		_, err := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace()).Create(cm)
		if err != nil && !errors.Is(err, kopf.ErrAlreadyExists) {
			return nil, err
		}
		return map[string]any{"configMap": cm.String("metadata.name")}, nil
	}
}

func remove(item string) kopf.Handler {
	return func(ctx *kopf.Context) (any, error) {
		ctx.Logger().Info("removing item", "item", item, "retry", ctx.Retry())
		err := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace()).Delete(ctx.Name() + "-" + item)
		if err != nil && !errors.Is(err, kopf.ErrNotFound) {
			return nil, err
		}
		return map[string]any{"removed": ctx.Name() + "-" + item}, nil
	}
}

// main never runs: the host initialises the module through _initialize.
func main() {}
