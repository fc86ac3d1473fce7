// Command children is the richer example that kopf-wasm's guest SDKs share:
// the same operator in Go (here), Rust (examples/rust/children) and
// AssemblyScript (examples/assemblyscript/children), whose end-to-end test
// (internal/polyglottest, TestChildren) asserts the same outcomes for the
// three. On every KopfExample:
//
//   - create_child makes a ConfigMap <name>-child holding spec.field,
//     adopted by the parent (a controller owner reference, the parent's
//     namespace and labels), so the garbage collector deletes it with the
//     parent; result {"child": "<name>-child"} under status.create_child;
//   - sync (a field handler on spec.field) copies the new value into the
//     ConfigMap with a merge patch; result {"field": value} under
//     status["sync/spec.field"];
//   - heartbeat, a timer every second, counts its runs in
//     status.heartbeat.beats.
package main

import (
	"errors"
	"fmt"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func init() {
	kopf.Module("children", "0.1.0")
	kopf.OnCreate(group, version, plural, createChild, kopf.ID("create_child"))
	kopf.OnField(group, version, plural, sync, kopf.ID("sync"), kopf.Field("spec.field"))
	kopf.Timer(group, version, plural, heartbeat, kopf.ID("heartbeat"), kopf.Interval(time.Second))
	kopf.Permit("", "configmaps", "create", "patch")
}

// text is a field's value as the ConfigMap stores it.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func createChild(ctx *kopf.Context) (any, error) {
	name := ctx.Name() + "-child"
	field, _ := ctx.Spec().Get("field")
	cm := kopf.Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name},
		"data":     map[string]any{"field": text(field)},
	}
	ctx.Adopt(cm)
	if _, err := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace()).Create(cm); err != nil && !errors.Is(err, kopf.ErrAlreadyExists) {
		return nil, err // arbitrary: retried after the backoff
	}
	ctx.Logger().Info("child created", "configmap", name)
	return map[string]any{"child": name}, nil
}

func sync(ctx *kopf.Context) (any, error) {
	value := text(ctx.New())
	patch := map[string]any{"data": map[string]any{"field": value}}
	_, err := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace()).Patch(ctx.Name()+"-child", kopf.MergePatch, patch)
	if errors.Is(err, kopf.ErrNotFound) {
		return nil, kopf.TemporaryError{Message: "the child does not exist yet", Delay: time.Second}
	}
	if err != nil {
		return nil, err
	}
	ctx.Logger().Info("child synced", "field", value)
	return map[string]any{"field": value}, nil
}

func heartbeat(ctx *kopf.Context) (any, error) {
	return map[string]any{"beats": ctx.Status().Int("heartbeat.beats") + 1}, nil
}

// main never runs: the host initialises the module through _initialize.
func main() {}
