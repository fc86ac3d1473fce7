package reactor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestDeletion pins how a deletion ends when other handlers are still busy:
// the two bugs a new user found (issue 15).
func TestDeletion(t *testing.T) {
	c := startCluster(t)
	for _, ns := range []string{"d-field", "d-timer"} {
		createNamespace(t, c, ns)
	}
	logs := &logRecorder{}
	kc := newKube(t, c)
	rt := newRuntime(t)
	run(t, kc, newLoggedOperator(t, kc, "d-*", testSettings(), slog.New(logs),
		load(t, rt, "reactor", "testguests/reactor"), load(t, rt, "spawning", "testguests/spawning")))

	// A field handler retrying an update is superseded by the deletion:
	// its record is purged, it is not called for the deletion, and the
	// finalizer goes once the delete handlers are done (Kopf: only the
	// current cause's handlers are re-purposed and counted).
	t.Run("delete during a field handler's retries releases the object", func(t *testing.T) {
		createExample(t, c, "d-field", "f", map[string]any{"field": "a"})
		e2etest.Eventually(t, 20*time.Second, "created", hasMessage(t, c, "d-field", "f", "create_fn", "created"))
		patchSpec(t, c, "d-field", "f", `{"spec":{"field":"b","fieldfail":"always"}}`)
		e2etest.Eventually(t, 20*time.Second, "the field handler retrying", func() error {
			return retrying(get(t, c, "d-field", "f").GetAnnotations()["kopf.zalando.org/field_fn.spec.field"])
		})
		deleteExample(t, c, "d-field", "f")
		e2etest.Eventually(t, 20*time.Second, "the object released", gone(t, c, "d-field", "f"))
		if got := logs.about("f", "Handler 'delete_fn' succeeded"); len(got) != 1 {
			t.Errorf("the delete handler succeeded %d times, want once: %q", len(got), got)
		}
		if got := logs.about("f", "Deletion is processed: 1 succeeded; 0 failed."); len(got) != 1 {
			t.Errorf("want one 'Deletion is processed: 1 succeeded; 0 failed.' line, got %q", got)
		}
	})

	// A timer still stopping when the delete handlers finish holds the
	// finalizer; the cycle that releases it must not run them again.
	t.Run("delete handlers run once when a timer is stopping", func(t *testing.T) {
		const n = 5
		for i := range n {
			createExampleWith(t, c, "d-timer", fmt.Sprintf("t%d", i), map[string]string{"mode": "timer"}, map[string]any{})
		}
		for i := range n {
			name := fmt.Sprintf("t%d", i)
			e2etest.Eventually(t, 20*time.Second, "created and ticking", func() error {
				obj := get(t, c, "d-timer", name)
				if err := hasMessage(t, c, "d-timer", name, "create_fn", "created")(); err != nil {
					return err
				}
				if _, ok := obj.Object["status"].(map[string]any)["tick"]; !ok {
					return fmt.Errorf("no tick yet")
				}
				return nil
			})
		}
		for i := range n {
			deleteExample(t, c, "d-timer", fmt.Sprintf("t%d", i))
		}
		for i := range n {
			name := fmt.Sprintf("t%d", i)
			e2etest.Eventually(t, 20*time.Second, "released", gone(t, c, "d-timer", name))
			if got := logs.about(name, "Handler 'delete_fn' succeeded"); len(got) != 1 {
				t.Errorf("%s: the delete handler succeeded %d times, want once; its log:\n%s", name, len(got), strings.Join(logs.about(name, ""), "\n"))
			}
		}
	})
}

// retrying fails unless a stored progress record shows a retried,
// unfinished handler.
func retrying(record string) error {
	var rec struct {
		Retries          int
		Success, Failure bool
	}
	if err := json.Unmarshal([]byte(record), &rec); err != nil {
		return fmt.Errorf("record %q: %v", record, err)
	}
	if rec.Retries < 1 || rec.Success || rec.Failure {
		return fmt.Errorf("record %s is not retrying", record)
	}
	return nil
}

func deleteExample(t *testing.T, c *cluster, ns, name string) {
	t.Helper()
	if err := c.dyn.Resource(kopfexamples).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
