package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestSwap swaps a module's version while objects are created
// continuously: every object is handled by exactly one version's create
// handler, none is missed, and the resume handler that only the new version
// has runs for the objects that existed before.
func TestSwap(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "sw")
	rt := newRuntime(t)
	v1 := load(t, rt, "reload", "testguests/reloadv1")
	v2 := load(t, rt, "reload", "testguests/reloadv2")
	kc := newKube(t, c)
	op := run(t, kc, newOperator(t, kc, "sw", testSettings(), v1))
	ctx := context.Background()

	const total, before = 30, 10
	for i := range total {
		if i == before {
			// Every object created so far is handled by v1 first: under
			// load an object not yet handled at the swap is created by v2
			// (correctly), which would blur the count below.
			for j := range before {
				name := fmt.Sprintf("obj-%d", j)
				e2etest.Eventually(t, 30*time.Second, "first objects", hasVersion(t, c, name, "create_fn", "v1"))
			}
			start := time.Now()
			if err := op.Swap(ctx, []*wasmrt.Module{v2}); err != nil {
				t.Fatal(err)
			}
			t.Logf("swap took %s", time.Since(start))
		}
		createExample(t, c, "sw", fmt.Sprintf("obj-%d", i), map[string]any{})
		time.Sleep(50 * time.Millisecond)
	}
	versions := map[string]int{}
	for i := range total {
		name := fmt.Sprintf("obj-%d", i)
		e2etest.Eventually(t, 30*time.Second, name, func() error {
			if v := version(get(t, c, "sw", name), "create_fn"); v == "" {
				return fmt.Errorf("%s is not handled", name)
			}
			return nil
		})
	}
	time.Sleep(time.Second) // a double run would show by now
	for i := range total {
		obj := get(t, c, "sw", fmt.Sprintf("obj-%d", i))
		versions[version(obj, "create_fn")]++
		if runs := obj.GetAnnotations()["create-runs"]; runs != "1" {
			t.Errorf("%s was created %s times", obj.GetName(), runs)
		}
	}
	if versions["v1"] < before || versions["v2"] == 0 || versions["v1"]+versions["v2"] != total {
		t.Errorf("objects by version: %v", versions)
	}
	for i := range before {
		e2etest.Eventually(t, 20*time.Second, "resumed", hasVersion(t, c, fmt.Sprintf("obj-%d", i), "resume_fn", "v2"))
	}
}

func version(obj *unstructured.Unstructured, id string) string {
	if obj == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "status", id, "version")
	return v
}

func hasVersion(t *testing.T, c *cluster, name, id, want string) func() error {
	return func() error {
		if got := version(get(t, c, "sw", name), id); got != want {
			return fmt.Errorf("status.%s.version of %s is %q, want %q", id, name, got, want)
		}
		return nil
	}
}

// TestSwapDropsResource swaps between a module set that serves a resource
// and one that serves none, while objects of it are created without pause:
// the watch that a swap drops stops without waiting for the event handlers
// that wait for the swap (a deadlock once), and every swap returns.
func TestSwapDropsResource(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "dl")
	rt := newRuntime(t)
	kc := newKube(t, c)
	op := run(t, kc, newOperator(t, kc, "dl", testSettings(), load(t, rt, "reload", "testguests/reloadv1")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
				"metadata": map[string]any{"name": fmt.Sprintf("o-%d", i)}, "spec": map[string]any{}}}
			_, _ = c.dyn.Resource(kopfexamples).Namespace("dl").Create(ctx, obj, metav1.CreateOptions{})
		}
	}()
	for i := range 8 {
		time.Sleep(300 * time.Millisecond)
		var mods []*wasmrt.Module
		if i%2 == 1 {
			mods = []*wasmrt.Module{load(t, rt, "reload", "testguests/reloadv1")}
		}
		done := make(chan error, 1)
		go func() { done <- op.Swap(context.Background(), mods) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("swap %d to %d modules did not return within 20s", i, len(mods))
		}
	}
}
