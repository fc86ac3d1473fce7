package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestStartWhileCreating starts the operator while objects are being
// created, as a replica that wins a Lease before its watch has listed
// (host processes with --leader-elect): objects exist before the watch
// lists, come in its listing and after it, and the cycles run while the
// listing is delivered. Every create handler runs exactly once (the log's
// calls and the create-runs annotation both say 1).
func TestStartWhileCreating(t *testing.T) {
	c := startCluster(t)
	const ns = "startlist"
	createNamespace(t, c, ns)
	rt := newRuntime(t)
	kc := newKube(t, c)
	rec := &logRecorder{}
	op := newLoggedOperator(t, kc, ns, testSettings(), slog.New(rec), load(t, rt, "reload", "testguests/reloadv1"))

	const n, creators = 240, 3
	ri := c.dyn.Resource(kopfexamples).Namespace(ns)
	var wg sync.WaitGroup
	created := make(chan struct{}, n)
	errs := make(chan error, n)
	for w := range creators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += creators {
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
					"metadata": map[string]any{"name": fmt.Sprintf("obj-%03d", i)}, "spec": map[string]any{}}}
				if _, err := ri.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
				created <- struct{}{}
			}
		}()
	}
	for range n / 4 {
		<-created
	}
	run(t, kc, op) // the watch lists the objects so far while more come
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for i := range n {
		name := fmt.Sprintf("obj-%03d", i)
		e2etest.Eventually(t, 90*time.Second, name+" handled", func() error {
			if statusVersion(get(t, c, ns, name)) != "v1" {
				return fmt.Errorf("%s: create_fn has not stored its result", name)
			}
			return nil
		})
	}
	var problems []string
	for i := range n {
		name := fmt.Sprintf("obj-%03d", i)
		calls := rec.about(name, "Handler 'create_fn' succeeded.")
		runs := get(t, c, ns, name).GetAnnotations()["create-runs"]
		if len(calls) != 1 || runs != "1" {
			problems = append(problems, fmt.Sprintf("%s: %d calls, create-runs %q", name, len(calls), runs))
		}
	}
	if len(problems) > 0 {
		t.Fatalf("create handlers not run exactly once:\n%s", strings.Join(problems, "\n"))
	}
}

// statusVersion is the version the reload guest's create_fn stored.
func statusVersion(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	status, _ := obj.UnstructuredContent()["status"].(map[string]any)
	fn, _ := status["create_fn"].(map[string]any)
	v, _ := fn["version"].(string)
	return v
}
