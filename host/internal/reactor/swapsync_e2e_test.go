package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestSwapReAddsResource swaps from a module that serves kopfexamples to
// an empty set (the watch stops) and back (a new watch lists them again),
// while objects are created and changed: the objects the operator
// remembers from before, those created while nothing watched them and
// those created during the swaps are each created exactly once. The new
// watch's cache fills while the remembered objects are already queued and
// the listing's objects are handled: none of them may be taken for deleted
// because the cache has not synced yet (they were, and the objects whose
// only event came then were never handled).
func TestSwapReAddsResource(t *testing.T) {
	c := startCluster(t)
	const ns = "readd"
	createNamespace(t, c, ns)
	rt := newRuntime(t)
	kc := newKube(t, c)
	// Seen once in CI10 (a loaded machine): before-5 created twice, both
	// cycles in one second, no failed write. Its records say which cycle
	// saw what next time.
	logs := &logRecorder{}
	op := run(t, kc, newLoggedOperator(t, kc, ns, testSettings(), slog.New(logs), load(t, rt, "reload", "testguests/reloadv1")))
	ctx := context.Background()

	const before, gap = 20, 200
	var names []string
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, name := range names {
			if hasCreateRuns(t, c, ns, name, 1)() != nil {
				t.Logf("%s's records:\n%s", name, strings.Join(logs.about(name, ""), "\n"))
			}
		}
	})
	for i := range before {
		names = append(names, fmt.Sprintf("before-%d", i))
		createExample(t, c, ns, names[i], map[string]any{})
	}
	for _, name := range names {
		e2etest.Eventually(t, 60*time.Second, "created before the swaps", hasCreateRuns(t, c, ns, name, 1))
	}
	if err := op.Swap(ctx, []*wasmrt.Module{}); err != nil {
		t.Fatal(err)
	}
	// Nothing watches kopfexamples now: these wait for the next watch's
	// listing.
	for i := range gap {
		names = append(names, fmt.Sprintf("gap-%d", i))
		createExample(t, c, ns, names[len(names)-1], map[string]any{})
	}

	// Load: objects created and the first ones changed without pause while
	// the resource is added again.
	changes := &objectLoad{ns: ns}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); changes.run(loadCtx, c, before) }()
	v1 := load(t, rt, "reload", "testguests/reloadv1") // a swap closes the modules it drops
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := op.Swap(ctx, []*wasmrt.Module{v1}); err != nil {
		t.Fatal(err)
	}
	t.Logf("swap that re-adds the resource took %s", time.Since(start).Round(time.Millisecond))
	time.Sleep(time.Second)
	stopLoad()
	wg.Wait()
	names = append(names, changes.created()...)

	for _, name := range names {
		e2etest.Eventually(t, 60*time.Second, "every object created once", hasCreateRuns(t, c, ns, name, 1))
	}
	t.Logf("%d objects created once each (%d before, %d while unwatched, %d during the swap), %d changes made",
		len(names), before, gap, len(names)-before-gap, changes.changes.Load())
}

// objectLoad creates objects and changes existing ones until its context
// ends.
type objectLoad struct {
	ns      string
	mu      sync.Mutex
	names   []string
	changes atomic.Int64
}

func (l *objectLoad) run(ctx context.Context, c *cluster, existing int) {
	ri := c.dyn.Resource(kopfexamples).Namespace(l.ns)
	for i := 0; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("load-%d", i)
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{}}}
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err == nil {
			l.mu.Lock()
			l.names = append(l.names, name)
			l.mu.Unlock()
		}
		patch := []byte(`{"spec":{"field":"` + strconv.Itoa(i) + `"}}`)
		if _, err := ri.Patch(ctx, fmt.Sprintf("before-%d", i%existing), types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
			l.changes.Add(1)
		}
	}
}

func (l *objectLoad) created() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.names...)
}

// hasCreateRuns checks that an object was handled by create_fn want times
// (the create-runs annotation of the reload guests).
func hasCreateRuns(t *testing.T, c *cluster, ns, name string, want int) func() error {
	return func() error {
		obj := get(t, c, ns, name)
		if obj == nil {
			return fmt.Errorf("%s does not exist", name)
		}
		if got := obj.GetAnnotations()["create-runs"]; got != strconv.Itoa(want) {
			return fmt.Errorf("%s: create-runs is %q, want %d", name, got, want)
		}
		return nil
	}
}

// TestSwapReAddKeepsMemos drops the resource of testguests/swapmemo with a
// swap and adds it back with the next: the objects the operator remembers
// are queued to resume at once, before the new watch has listed them, and
// must not be taken for deleted then: their memos were dropped, and the
// memo the timer sees after the swaps lost what the create handler (which
// does not run again) had put in.
func TestSwapReAddKeepsMemos(t *testing.T) {
	c := startCluster(t)
	const ns = "readdmemo"
	createNamespace(t, c, ns)
	rt := newRuntime(t)
	kc := newKube(t, c)
	op := run(t, kc, newOperator(t, kc, ns, testSettings(), load(t, rt, "swapmemo", "testguests/swapmemo")))
	ctx := context.Background()
	const n = 5
	for i := range n {
		createExample(t, c, ns, fmt.Sprintf("m%d", i), map[string]any{})
	}
	for i := range n {
		e2etest.Eventually(t, 60*time.Second, "the memo before the swaps", hasMemoCreate(t, c, ns, fmt.Sprintf("m%d", i)))
	}
	again := load(t, rt, "swapmemo", "testguests/swapmemo") // a swap closes the modules it drops
	if err := op.Swap(ctx, []*wasmrt.Module{}); err != nil {
		t.Fatal(err)
	}
	if err := op.Swap(ctx, []*wasmrt.Module{again}); err != nil {
		t.Fatal(err)
	}
	// The ticks from now on come from the timer of the module added back.
	for i := range n {
		patch := []byte(`{"status":{"tick":null}}`)
		if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Patch(ctx, fmt.Sprintf("m%d", i), types.MergePatchType,
			patch, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		e2etest.Eventually(t, 60*time.Second, "the memo after the swaps", hasMemoCreate(t, c, ns, fmt.Sprintf("m%d", i)))
	}
}

// hasMemoCreate checks that the swapmemo guest's timer saw create=true in
// the object's memo (status.tick).
func hasMemoCreate(t *testing.T, c *cluster, ns, name string) func() error {
	return func() error {
		obj := get(t, c, ns, name)
		if obj == nil {
			return fmt.Errorf("%s does not exist", name)
		}
		tick, found, _ := unstructured.NestedMap(obj.Object, "status", "tick")
		if !found || tick["create"] != true {
			return fmt.Errorf("the timer's memo of %s is %v (found %v), want create=true", name, tick, found)
		}
		return nil
	}
}
