package reactor_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// Where the diff-base of a largeCase is.
var (
	diffBaseAnnotation = []string{"metadata", "annotations", "kopf.zalando.org/last-handled-configuration"}
	diffBaseStatus     = []string{"status", "kopf", "last-handled-configuration"}
)

// noise is n characters that gzip cannot shrink much (base64 of random
// bytes from a fixed seed).
func noise(n int) string {
	r := rand.New(rand.NewChaCha8([32]byte{7}))
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)[:n]
}

// largeInStatus: with the diff-base in a status that keeps it (the
// default), an object of ~1 MiB whose diff-base, as JSON, would take the
// object past etcd's 1.5 MiB: stored as a digest, created and updated once,
// deleted.
func largeInStatus(t *testing.T, c *cluster) {
	const ns = "hostile-status"
	createNamespace(t, c, ns)
	logs := &logRecorder{}
	kc := newKube(t, c)
	op := run(t, kc, newLoggedOperator(t, kc, ns, testSettings(), slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))
	large := largeCase{c: c, logs: logs, ns: ns, where: diffBaseStatus}
	large.check(t, "huge-status", noise(1<<20), "sha256:")
	op.stop(t)

	// A room the host measures too large (here a bound past etcd's, as
	// metadata.managedFields the host does not keep would leave it): the
	// ~2 MiB status PATCH is refused (etcd, a 500), the next write stores
	// the digest, and the object is throttled once, not for ever.
	set := testSettings()
	set.Persistence.DiffBaseObjectBytes = 16 << 20
	logs = &logRecorder{}
	op = run(t, kc, newLoggedOperator(t, kc, ns, set, slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))
	large = largeCase{c: c, logs: logs, ns: ns, where: diffBaseStatus}
	large.refused(t, "refused-status", noise(1<<20))
	op.stop(t)
}

// refused creates name with spec.blob, which the host stores as JSON until
// the API server refuses the write as too large; then as a digest, with a
// DiffBaseTooLarge Event saying why, after one throttled cycle.
func (lc largeCase) refused(t *testing.T, name, blob string) {
	t.Helper()
	c, ns := lc.c, lc.ns
	createExample(t, c, ns, name, map[string]any{"field": "a", "blob": blob})
	e2etest.Eventually(t, 120*time.Second, name+": the diff-base stored", func() error {
		value, _, _ := unstructured.NestedString(get(t, c, ns, name).Object, lc.where...)
		if !strings.HasPrefix(value, "sha256:") {
			return fmt.Errorf("the diff-base at %s is %.40q, want the digest", strings.Join(lc.where, "."), value)
		}
		return nil
	})
	lc.event(t, name, "refused the object's last write as too large")
	if got := lc.logs.about(name, "due to an unexpected error"); len(got) != 1 || !strings.Contains(got[0], "too large") {
		t.Errorf("%s: want one throttling for the refused write, got %q", name, got)
	} else {
		t.Logf("the refused write: %.300s", got[0])
	}
	if got := lc.logs.about(name, "does not fit"); len(got) != 0 {
		t.Errorf("%s: %q, want only the refused write's warning", name, got)
	}
	deleteExample(t, c, ns, name)
	e2etest.Eventually(t, 120*time.Second, name+" deleted", func() error {
		if get(t, c, ns, name) != nil {
			return fmt.Errorf("%s/%s still exists", ns, name)
		}
		return nil
	})
}

// largeCase checks objects whose diff-base is too large for where it goes.
type largeCase struct {
	c     *cluster
	logs  *logRecorder
	ns    string
	where []string // the diff-base's path
}

// check creates name with spec.blob (and spec.field "a"), and checks that
// create_fn runs once, the diff-base is stored in the form with prefix, a
// DiffBaseTooLarge Event and one warning say so, a change of spec.field
// runs update_fn once (and field_fn, which sees the new value), and the
// object can be deleted.
func (lc largeCase) check(t *testing.T, name, blob, prefix string) {
	t.Helper()
	c, ns, logs := lc.c, lc.ns, lc.logs
	createExample(t, c, ns, name, map[string]any{"field": "a", "blob": blob})
	e2etest.Eventually(t, 120*time.Second, name+": the diff-base stored", func() error {
		obj := get(t, c, ns, name)
		value, _, _ := unstructured.NestedString(obj.Object, lc.where...)
		if !strings.HasPrefix(value, prefix) {
			return fmt.Errorf("the diff-base at %s is %.40q, want %q...", strings.Join(lc.where, "."), value, prefix)
		}
		return nil
	})
	if runs := get(t, c, ns, name).GetAnnotations()["create-runs"]; runs != "1" {
		t.Errorf("%s: create_fn ran %s times (create-runs), want 1", name, runs)
	}
	lc.event(t, name, prefix) // posted after the warning is logged
	warnings := logs.about(name, "does not fit")
	if len(warnings) != 1 || !strings.Contains(warnings[0], prefix) {
		t.Errorf("%s: want one warning naming %q, got %q", name, prefix, warnings)
	}

	// create_fn's create-runs annotation is essential (as any annotation
	// in Kopf): its echo is one update, which ends before the change.
	updates := lc.processed(t, name, 1)
	patchSpec(t, c, ns, name, `{"spec":{"field":"b"}}`)
	lc.processed(t, name, 2)
	for handler, want := range map[string]int{"create_fn": 1, "update_fn": updates["update_fn"] + 1,
		"field_fn/spec.field": updates["field_fn/spec.field"] + 1} {
		if got := logs.about(name, "Handler '"+handler+"' succeeded"); len(got) != want {
			t.Errorf("%s: %s succeeded %d times, want %d; the log about it:\n%s", name, handler, len(got), want,
				strings.Join(logs.about(name, ""), "\n"))
		}
	}
	if lc.where[0] == "status" { // a status that keeps the results: field_fn's old and new
		e2etest.Eventually(t, 30*time.Second, name+": field_fn's result", func() error {
			got, _, _ := unstructured.NestedMap(get(t, c, ns, name).Object, "status", "field_fn/spec.field")
			if _, hasOld := got["old"]; got["new"] != "b" || hasOld != (prefix != "sha256:") {
				return fmt.Errorf("field_fn saw %v; want new=b, and old=null after a digest", got)
			}
			return nil
		})
	}
	if got := logs.about(name, "hrottl"); len(got) != 0 {
		t.Errorf("%s: throttled: %q", name, got)
	}
	if got := logs.about(name, "does not fit"); len(got) != 1 {
		t.Errorf("%s: %d warnings after the update, want still 1 (the form did not change)", name, len(got))
	}
	deleteExample(t, c, ns, name)
	e2etest.Eventually(t, 120*time.Second, name+" deleted", func() error {
		if get(t, c, ns, name) != nil {
			return fmt.Errorf("%s/%s still exists", ns, name)
		}
		return nil
	})
}

// processed waits until n updates of name are processed, and returns how
// many times update_fn and field_fn succeeded by then.
func (lc largeCase) processed(t *testing.T, name string, n int) map[string]int {
	t.Helper()
	e2etest.Eventually(t, 120*time.Second, fmt.Sprintf("%s: %d updates processed", name, n), func() error {
		if got := len(lc.logs.about(name, "Updating is processed")); got < n {
			return fmt.Errorf("%d updates processed", got)
		}
		return nil
	})
	if got := lc.logs.about(name, "Updating is processed"); len(got) != n {
		t.Errorf("%s: %d updates processed, want %d: %q", name, len(got), n, got)
	}
	return map[string]int{
		"update_fn":           len(lc.logs.about(name, "Handler 'update_fn' succeeded")),
		"field_fn/spec.field": len(lc.logs.about(name, "Handler 'field_fn/spec.field' succeeded")),
	}
}

// event waits for the object's DiffBaseTooLarge Warning Event, which names
// the stored form.
func (lc largeCase) event(t *testing.T, name, prefix string) {
	t.Helper()
	e2etest.Eventually(t, 30*time.Second, name+": the DiffBaseTooLarge Event", func() error {
		list, err := lc.c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(lc.ns).
			List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=DiffBaseTooLarge"})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d DiffBaseTooLarge Events", len(list.Items))
		}
		if msg, _ := list.Items[0].Object["message"].(string); list.Items[0].Object["type"] != "Warning" || !strings.Contains(msg, prefix) {
			return fmt.Errorf("the Event: %v %q", list.Items[0].Object["type"], msg)
		}
		return nil
	})
}
