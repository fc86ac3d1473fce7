package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestHostileInput: a CRD whose status schema prunes unknown fields
// (Kopf's lost-progress trap): the host notices that the diff-base it
// wrote to status.kopf vanished, keeps it in the annotation from then on,
// says so in a warning and a Warning Event, and an update is an update
// (the object is not created again). Then objects whose diff-base would
// pass the API server's 256 KiB limit on annotations (Kopf #1087). Before
// that, with the status keeping unknown fields, an object of ~1 MiB, whose
// diff-base in the status would pass etcd's 1.5 MiB per object.
func TestHostileInput(t *testing.T) {
	c := startCluster(t)
	const ns = "hostile"
	createNamespace(t, c, ns)
	ctx := context.Background()
	largeInStatus(t, c)

	// The status keeps only a phase.
	crd, err := c.dyn.Resource(crds).Get(ctx, "kopfexamples.kopf.dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	v0 := versions[0].(map[string]any)
	if err := unstructured.SetNestedMap(v0, map[string]any{"type": "object", "properties": map[string]any{
		"phase": map[string]any{"type": "string"}}}, "schema", "openAPIV3Schema", "properties", "status"); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
	if _, err := c.dyn.Resource(crds).Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createExample(t, c, "default", "probe", map[string]any{})
	e2etest.Eventually(t, 30*time.Second, "the status pruned", func() error {
		out, err := c.dyn.Resource(kopfexamples).Namespace("default").Patch(ctx, "probe", types.MergePatchType,
			[]byte(`{"status":{"x":1,"phase":"p"}}`), metav1.PatchOptions{}, "status")
		if err != nil {
			return err
		}
		if _, kept, _ := unstructured.NestedFieldNoCopy(out.Object, "status", "x"); kept {
			return fmt.Errorf("status.x kept")
		}
		return nil
	})

	logs := &logRecorder{}
	kc := newKube(t, c)
	run(t, kc, newLoggedOperator(t, kc, ns, testSettings(), slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))

	createExample(t, c, ns, "p1", map[string]any{"field": "a"})
	e2etest.Eventually(t, 60*time.Second, "the diff-base in the annotation", func() error {
		if _, ok := get(t, c, ns, "p1").GetAnnotations()["kopf.zalando.org/last-handled-configuration"]; !ok {
			return fmt.Errorf("no diff-base annotation: %v", get(t, c, ns, "p1").GetAnnotations())
		}
		return nil
	})
	if got := logs.about("p1", "drops unknown fields"); len(got) == 0 || !strings.Contains(got[0], "x-kubernetes-preserve-unknown-fields") {
		t.Errorf("no warning about the pruned status: %q", got)
	}
	e2etest.Eventually(t, 20*time.Second, "the StatusPruned Event", func() error {
		list, err := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=StatusPruned"})
		if err != nil || len(list.Items) != 1 {
			return fmt.Errorf("%v StatusPruned Events (%v)", len(list.Items), err)
		}
		return nil
	})
	patchSpec(t, c, ns, "p1", `{"spec":{"field":"b"}}`)
	e2etest.Eventually(t, 60*time.Second, "the update handled", func() error {
		if len(logs.about("p1", "Handler 'update_fn' succeeded")) == 0 {
			return fmt.Errorf("update_fn has not succeeded")
		}
		return nil
	})
	if got := logs.about("p1", "Handler 'create_fn' succeeded"); len(got) != 1 {
		t.Errorf("create_fn succeeded %d times, want once (the update must not look like a creation)", len(got))
	}

	// Diff-bases larger than the annotation may hold (Kopf #1087): stored
	// compressed, or as a digest when even that is too large; each object
	// is created once, updated once, reported once, and deleted.
	large := largeCase{c: c, logs: logs, ns: ns, where: diffBaseAnnotation}
	large.check(t, "big", strings.Repeat("b", 300<<10), "gzip+base64:")
	large.check(t, "huge", noise(300<<10), "sha256:")
}

// TestFailingDeleteHandler: a delete handler that keeps failing holds its
// object with the finalizer (Kopf's), and its log line and Warning Event
// carry the kubectl patch that releases it, which works; one that fails
// permanently lets the object go (Kopf's) and says so.
func TestFailingDeleteHandler(t *testing.T) {
	c := startCluster(t)
	const ns = "delete-fails"
	createNamespace(t, c, ns)
	ctx := context.Background()
	logs := &logRecorder{}
	kc := newKube(t, c)
	run(t, kc, newLoggedOperator(t, kc, ns, testSettings(), slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))
	for _, mode := range []string{"always", "permanent"} {
		createExample(t, c, ns, mode, map[string]any{"delete": mode})
		e2etest.Eventually(t, 60*time.Second, mode+" created", hasMessage(t, c, ns, mode, "create_fn", "created"))
		deleteExample(t, c, ns, mode)
	}
	e2etest.Eventually(t, 60*time.Second, "the permanent failure's object gone", gone(t, c, ns, "permanent"))
	if got := logs.about("permanent", "The deletion goes on without it"); len(got) != 1 {
		t.Errorf("want one line saying the deletion goes on, got %q", got)
	}

	var command string
	e2etest.Eventually(t, 60*time.Second, "the release command in an Event", func() error {
		list, err := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns).
			List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=always,reason=Error"})
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			msg, _ := ev.Object["message"].(string)
			if _, cmd, ok := strings.Cut(msg, "to let it go without the handler: "); ok {
				command = cmd
				return nil
			}
		}
		return fmt.Errorf("no Event with the command among %d", len(list.Items))
	})
	if len(logs.about("always", "kubectl patch kopfexamples.kopf.dev always -n "+ns+" --type=json")) == 0 {
		t.Errorf("the log lines lack the command")
	}
	if obj := get(t, c, ns, "always"); obj == nil || len(obj.GetFinalizers()) != 1 {
		t.Fatalf("the object is not held by the finalizer: %v", obj)
	}
	// Run the command as kubectl would: its JSON patch.
	_, patch, ok := strings.Cut(command, "-p '")
	patch = strings.TrimSuffix(patch, "'")
	if !ok || !strings.HasPrefix(patch, "[") {
		t.Fatalf("cannot read the patch of %q", command)
	}
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Patch(ctx, "always", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("the release command failed: %v", err)
	}
	e2etest.Eventually(t, 30*time.Second, "the released object gone", gone(t, c, ns, "always"))
}
