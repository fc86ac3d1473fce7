package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// count reads status.<id>.<field> as a number (-1 when absent).
func count(t *testing.T, c *cluster, ns, name string, path ...string) int64 {
	t.Helper()
	obj := get(t, c, ns, name)
	if obj == nil {
		return -1
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, append([]string{"status"}, path...)...)
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

func atLeast(t *testing.T, c *cluster, ns, name string, want int64, path ...string) func() error {
	return func() error {
		if got := count(t, c, ns, name, path...); got < want {
			return fmt.Errorf("status.%v is %d, want at least %d", path, got, want)
		}
		return nil
	}
}

func labelPatch(t *testing.T, c *cluster, ns, name, value string) {
	t.Helper()
	v := "null"
	if value != "" {
		v = fmt.Sprintf("%q", value)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{"mode":%s}}}`, v)
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// gone fails while the object exists.
func gone(t *testing.T, c *cluster, ns, name string) func() error {
	return func() error {
		if obj := get(t, c, ns, name); obj != nil {
			return fmt.Errorf("%s/%s still exists (finalizers %v, annotations %v)", ns, name, obj.GetFinalizers(), obj.GetAnnotations())
		}
		return nil
	}
}

// TestTimersAndDaemons runs the spawning test module.
func TestTimersAndDaemons(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "s")
	startOperator(t, c, "s", testSettings(), "testguests/spawning")

	t.Run("timer ticks at its interval", func(t *testing.T) {
		createExampleWith(t, c, "s", "timer", map[string]string{"mode": "timer"}, map[string]any{})
		start := time.Now()
		e2etest.Eventually(t, 20*time.Second, "ticks", atLeast(t, c, "s", "timer", 4, "tick", "count"))
		if elapsed := time.Since(start); elapsed < 1500*time.Millisecond {
			t.Errorf("4 ticks of a 0.5s timer came within %s", elapsed)
		}
		if !hasFinalizer(get(t, c, "s", "timer")) {
			t.Error("an object with a timer has no finalizer")
		}
	})

	t.Run("timer honours its initial delay", func(t *testing.T) {
		createExampleWith(t, c, "s", "delayed", map[string]string{"mode": "delayed"}, map[string]any{})
		time.Sleep(time.Second)
		if n := count(t, c, "s", "delayed", "delayed_tick", "count"); n > 0 {
			t.Errorf("the timer ticked %d times within its initial delay", n)
		}
		e2etest.Eventually(t, 20*time.Second, "ticks", atLeast(t, c, "s", "delayed", 1, "delayed_tick", "count"))
	})

	t.Run("timer waits for idleness", func(t *testing.T) {
		createExampleWith(t, c, "s", "idle", map[string]string{"mode": "idle"}, map[string]any{})
		for i := range 6 {
			patchSpec(t, c, "s", "idle", fmt.Sprintf(`{"spec":{"step":%d}}`, i))
			time.Sleep(400 * time.Millisecond)
		}
		if n := count(t, c, "s", "idle", "idle_tick", "count"); n > 0 {
			t.Errorf("the idle timer ticked %d times while the object kept changing", n)
		}
		e2etest.Eventually(t, 20*time.Second, "ticks once idle", atLeast(t, c, "s", "idle", 1, "idle_tick", "count"))
	})

	t.Run("daemon stops on filter mismatch and starts again", func(t *testing.T) {
		createExampleWith(t, c, "s", "daemon", map[string]string{"mode": "daemon"}, map[string]any{})
		e2etest.Eventually(t, 20*time.Second, "beats", atLeast(t, c, "s", "daemon", 3, "monitor", "beats"))
		labelPatch(t, c, "s", "daemon", "")
		e2etest.Eventually(t, 20*time.Second, "stopped", func() error {
			obj := get(t, c, "s", "daemon")
			if why, _, _ := unstructured.NestedString(obj.Object, "status", "monitor", "stopped"); why != "filters-mismatch" {
				return fmt.Errorf("status.monitor.stopped is %q", why)
			}
			return nil
		})
		stoppedAt := count(t, c, "s", "daemon", "monitor", "beats")
		time.Sleep(time.Second)
		if n := count(t, c, "s", "daemon", "monitor", "beats"); n != stoppedAt {
			t.Errorf("the stopped daemon went on beating: %d, then %d", stoppedAt, n)
		}
		labelPatch(t, c, "s", "daemon", "daemon")
		e2etest.Eventually(t, 20*time.Second, "beats again", func() error {
			if n := count(t, c, "s", "daemon", "monitor", "beats"); n < 3 || n == stoppedAt {
				return fmt.Errorf("beats %d (stopped at %d)", n, stoppedAt)
			}
			return nil
		})
	})

	t.Run("daemon stops on deletion and releases the object", func(t *testing.T) {
		if err := c.dyn.Resource(kopfexamples).Namespace("s").Delete(context.Background(), "daemon", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2etest.Eventually(t, 20*time.Second, "gone", gone(t, c, "s", "daemon"))
	})

	t.Run("a daemon ignoring the stop is terminated after its cancellation timeout", func(t *testing.T) {
		createExampleWith(t, c, "s", "stubborn", map[string]string{"mode": "stubborn"}, map[string]any{})
		e2etest.Eventually(t, 20*time.Second, "finalizer", func() error {
			if !hasFinalizer(get(t, c, "s", "stubborn")) {
				return fmt.Errorf("no finalizer yet")
			}
			return nil
		})
		time.Sleep(500 * time.Millisecond) // let the daemon start
		start := time.Now()
		if err := c.dyn.Resource(kopfexamples).Namespace("s").Delete(context.Background(), "stubborn", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if get(t, c, "s", "stubborn") == nil {
			t.Fatal("the object went before its daemon was stopped")
		}
		e2etest.Eventually(t, 20*time.Second, "gone", gone(t, c, "s", "stubborn"))
		if elapsed := time.Since(start); elapsed < time.Second {
			t.Errorf("released within %s, before the cancellation timeout of 1s", elapsed)
		}
	})

	// A daemon asleep in time.Sleep (WASI's poll_oneoff) checks no loop
	// flag: the host's sleep ends with the call. Without it the object
	// stayed until the guest's hour-long sleep ended.
	t.Run("a daemon asleep in time.Sleep is terminated after its cancellation timeout", func(t *testing.T) {
		createExampleWith(t, c, "s", "sleepy", map[string]string{"mode": "sleepy"}, map[string]any{})
		e2etest.Eventually(t, 20*time.Second, "finalizer", func() error {
			if !hasFinalizer(get(t, c, "s", "sleepy")) {
				return fmt.Errorf("no finalizer yet")
			}
			return nil
		})
		time.Sleep(500 * time.Millisecond) // let the daemon fall asleep
		if err := c.dyn.Resource(kopfexamples).Namespace("s").Delete(context.Background(), "sleepy", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2etest.Eventually(t, time.Minute, "gone", gone(t, c, "s", "sleepy"))
	})
}

// TestShutdownEndsASleepingDaemon: a host asked to exit stops its daemons
// ("exiting") and terminates those that ignore it after their cancellation
// timeout (1 s here), also one asleep in time.Sleep. Before the host's
// sleep ended with the call, the guest slept on and the host waited for
// its cycles' 25 s bound before abandoning them.
func TestShutdownEndsASleepingDaemon(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "sleep-exit")
	op := startOperator(t, c, "sleep-exit", testSettings(), "testguests/spawning")
	createExampleWith(t, c, "sleep-exit", "sleepy", map[string]string{"mode": "sleepy"}, map[string]any{})
	e2etest.Eventually(t, 20*time.Second, "finalizer", func() error {
		if !hasFinalizer(get(t, c, "sleep-exit", "sleepy")) {
			return fmt.Errorf("no finalizer yet")
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // let the daemon fall asleep
	start := time.Now()
	op.cancel()
	select {
	case err := <-op.done:
		if err != nil {
			t.Errorf("operator: %v", err)
		}
		op.done <- nil // for the cleanup's stop
	case <-time.After(time.Minute):
		t.Fatal("the operator did not stop within a minute")
	}
	// 1 s of cancellation timeout, far below the 25 s after which the host
	// abandons cycles that do not end.
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("the operator took %v to stop", elapsed)
	}
}
