package examplestest

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// number reads a number in obj at path (-1 when absent).
func number(obj *unstructured.Unstructured, path ...string) int64 {
	if obj == nil {
		return -1
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if !ok {
		return -1
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}

// TestTimers: the heartbeat counts every second; the idle timer waits
// until the object stops changing.
func TestTimers(t *testing.T) {
	const ns = "ex-timers"
	operator(t, ns, "07-timers")
	createObject(t, kopfexamples, ns, kex("beating", nil, map[string]any{"step": 0}))
	for i := 1; i <= 4; i++ {
		time.Sleep(500 * time.Millisecond)
		mergePatch(t, kopfexamples, ns, "beating", fmt.Sprintf(`{"spec":{"step":%d}}`, i))
	}
	if n := number(get(t, kopfexamples, ns, "beating"), "status", "settled", "spec", "step"); n >= 0 {
		t.Errorf("the idle timer ran while the object kept changing (saw step %d)", n)
	}
	e2etest.Eventually(t, 30*time.Second, "heartbeats", func() error {
		if n := number(get(t, kopfexamples, ns, "beating"), "status", "heartbeat", "beats"); n < 3 {
			return fmt.Errorf("%d beats", n)
		}
		return nil
	})
	e2etest.Eventually(t, 30*time.Second, "settled", func() error {
		if n := number(get(t, kopfexamples, ns, "beating"), "status", "settled", "spec", "step"); n != 4 {
			return fmt.Errorf("status.settled.spec.step is %d, want 4", n)
		}
		return nil
	})
}

// TestDaemons: the daemon beats into the status, and deleting the object
// stops it and releases the object.
func TestDaemons(t *testing.T) {
	const ns = "ex-daemons"
	logs := operator(t, ns, "08-daemons")
	createObject(t, kopfexamples, ns, kex("watched", nil, map[string]any{}))
	e2etest.Eventually(t, 30*time.Second, "beats", func() error {
		if n := number(get(t, kopfexamples, ns, "watched"), "status", "monitor", "beats"); n < 3 {
			return fmt.Errorf("%d beats", n)
		}
		return nil
	})
	if err := dyn.Resource(kopfexamples).Namespace(ns).Delete(context.Background(), "watched", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 30*time.Second, "stopped", logged(logs, "monitor stopped", "reason=deleted"))
	e2etest.Eventually(t, 30*time.Second, "released", func() error {
		if get(t, kopfexamples, ns, "watched") != nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}

// hasStringSet checks that the activities ConfigMap has a non-empty key.
func hasStringSet(t *testing.T, ns, key string) func() error {
	return func() error {
		cm := get(t, configmaps, ns, "activities")
		if cm == nil {
			return fmt.Errorf("no ConfigMap activities")
		}
		if v, _, _ := unstructured.NestedString(cm.Object, "data", key); v == "" {
			return fmt.Errorf("data.%s is empty: %v", key, cm.Object["data"])
		}
		return nil
	}
}
