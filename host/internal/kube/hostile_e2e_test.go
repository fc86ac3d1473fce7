package kube

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// nested is a JSON object nested depth levels deep.
func nested(depth int) map[string]any {
	v := map[string]any{"leaf": "x"}
	for range depth - 1 {
		v = map[string]any{"a": v}
	}
	return v
}

// TestE2EWatchCaps, on the real API server: with small caps, watch events
// of an object too large or too deeply nested are skipped with an error
// line and a Warning Event on the object, while the other objects' events
// flow; a skipped deletion still clears the cache. With the default caps,
// an object near the API server's size limit and a deep one come through.
func TestE2EWatchCaps(t *testing.T) {
	env := cluster(t)
	logs := &syncBuffer{}
	c, err := New(env.Config, Options{Settings: func() *settings.Settings {
		s := settings.Default()
		s.Watching.MaxEventBytes, s.Watching.MaxEventDepth = 256<<10, 40
		return &s
	}(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	plain, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-watch-caps")
	res := resolve(t, c, "kopfexamples")
	scope, _ := ParseNamespaces(ns)
	rec := newRecorder()
	w, err := c.Watch(t.Context(), res, scope, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	big := kex(ns, "big", nil)
	big.Object["spec"] = map[string]any{"blob": strings.Repeat("b", 300<<10)}
	create(t, dyn, kexGVR, big)
	deep := kex(ns, "deep", nil)
	deep.Object["spec"] = nested(50)
	create(t, dyn, kexGVR, deep)
	create(t, dyn, kexGVR, kex(ns, "small", nil))
	if ev := rec.next(t, "small"); ev.Type != Added { // and not big or deep, which came before
		t.Errorf("small: %s", ev.Type)
	}
	for _, name := range []string{"big", "deep"} {
		if _, ok := w.Get(ns, name); ok {
			t.Errorf("%s is in the cache", name)
		}
		eventually(t, "the Warning Event about "+name, func() bool {
			list, err := dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
			return err == nil && len(list.Items) > 0 && list.Items[0].Object["reason"] == "WatchEventSkipped"
		})
	}
	for _, line := range []string{"Skipped a watch event (ADDED, resourceVersion", "of " + ns + "/big: ", "over watching.maxEventBytes (262144)",
		"of " + ns + "/deep: nested ", "over watching.maxEventDepth (40)"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, logs.String())
		}
	}

	// Shrunk, big comes through; grown again and deleted, its deletion
	// comes as its name alone and the cache drops it.
	patch := func(name, body string) {
		if _, err := dyn.Resource(kexGVR).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch("big", `{"spec":{"blob":"small now"}}`)
	if ev := rec.next(t, "big"); ev.Type != Added {
		t.Errorf("big, shrunk: %s, want ADDED (new to the cache)", ev.Type)
	}
	patch("big", fmt.Sprintf(`{"spec":{"blob":%q}}`, strings.Repeat("c", 300<<10)))
	if err := dyn.Resource(kexGVR).Namespace(ns).Delete(t.Context(), "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := rec.next(t, "big"); ev.Type != Deleted || ev.Object.GetUID() == "" {
		t.Errorf("big, deleted: %s %v, want DELETED with its uid", ev.Type, ev.Object.Object)
	}
	eventually(t, "big gone from the cache", func() bool { _, ok := w.Get(ns, "big"); return !ok })

	// The default caps pass an object near the size limit and a deep one.
	rec2 := newRecorder()
	w2, err := plain.Watch(t.Context(), res, scope, rec2.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if err := w2.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	huge := kex(ns, "huge", nil)
	huge.Object["spec"] = map[string]any{"blob": strings.Repeat("h", 1200<<10)}
	create(t, dyn, kexGVR, huge)
	deeper := kex(ns, "deeper", nil)
	deeper.Object["spec"] = nested(100)
	create(t, dyn, kexGVR, deeper)
	for _, name := range []string{"huge", "deeper"} {
		if ev := rec2.next(t, name); ev.Type != Added {
			t.Errorf("%s: %s", name, ev.Type)
		}
	}
}
