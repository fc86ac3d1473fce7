package reactor_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// The test binary doubles as an operator process, so that a test can
// SIGKILL it mid-handling and start another.
const (
	envKubeconfig = "REACTOR_TEST_KUBECONFIG"
	envNamespace  = "REACTOR_TEST_NAMESPACE"
	envModule     = "REACTOR_TEST_MODULE"
)

func TestMain(m *testing.M) {
	if kc := os.Getenv(envKubeconfig); kc != "" {
		if err := runOperatorProcess(kc, os.Getenv(envNamespace), os.Getenv(envModule)); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Every goroutine a host or operator started is gone once the tests
	// have stopped them (e2etest.LeakOptions names what is not theirs).
	goleak.VerifyTestMain(m, e2etest.LeakOptions()...)
}

func runOperatorProcess(kubeconfig, ns, module string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cfg, err := kube.LoadConfig(kubeconfig, "")
	if err != nil {
		return err
	}
	kc, err := kube.New(cfg, kube.Options{})
	if err != nil {
		return err
	}
	rt, err := wasmrt.New(wasmrt.Options{})
	if err != nil {
		return err
	}
	code, err := os.ReadFile(module)
	if err != nil {
		return err
	}
	mod, err := rt.Load(ctx, "reactor", code)
	if err != nil {
		return err
	}
	namespaces, err := kube.ParseNamespaces(ns)
	if err != nil {
		return err
	}
	op, err := reactor.New(ctx, reactor.Options{Kube: kc, Modules: []*wasmrt.Module{mod}, Namespaces: namespaces, Settings: testSettings()})
	if err != nil {
		return err
	}
	return op.Run(ctx)
}

// startProcess runs an operator process on the reactor test module.
func startProcess(t *testing.T, c *cluster, ns string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envKubeconfig+"="+c.env.Kubeconfig, envNamespace+"="+ns,
		envModule+"="+wasmtest.Path(t, "testguests/reactor"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestRestart kills the operator with SIGKILL while a handler waits for its
// retry, changes an object while no operator runs, and starts another: the
// unfinished handler continues with its retry count, finished handlers do
// not run again, the change is handled and unchanged objects are resumed.
func TestRestart(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "r")
	createExample(t, c, "r", "slow", map[string]any{"create": "temporary", "times": 1, "delay": 4})
	createExample(t, c, "r", "done", map[string]any{"field": "a"})
	createExample(t, c, "r", "idle", map[string]any{})

	first := startProcess(t, c, "r")
	e2etest.Eventually(t, 30*time.Second, "done created", hasMessage(t, c, "r", "done", "create_fn", "created"))
	e2etest.Eventually(t, 30*time.Second, "idle created", hasMessage(t, c, "r", "idle", "create_fn", "created"))
	e2etest.Eventually(t, 30*time.Second, "slow attempted", func() error {
		progress := get(t, c, "r", "slow").GetAnnotations()["kopf.zalando.org/create_fn"]
		if !strings.Contains(progress, `"retries":1`) {
			return fmt.Errorf("progress of create_fn is %q", progress)
		}
		return nil
	})
	// Let the object settle (its own annotation patch causes an update).
	e2etest.Eventually(t, 30*time.Second, "done settled", hasMessage(t, c, "r", "done", "update_fn", "updated"))
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	patchSpec(t, c, "r", "done", `{"spec":{"field":"b"}}`)

	startProcess(t, c, "r")
	e2etest.Eventually(t, 30*time.Second, "slow created", hasMessage(t, c, "r", "slow", "create_fn", "created"))
	slow := get(t, c, "r", "slow")
	if runs := slow.GetAnnotations()["create-runs"]; runs != "2" {
		t.Errorf("slow's create handler ran %s times in all, want 2 (one attempt in each process)", runs)
	}
	e2etest.Eventually(t, 30*time.Second, "change while down", hasField(t, c, "r", "done", "a", "b"))
	e2etest.Eventually(t, 30*time.Second, "idle resumed", hasMessage(t, c, "r", "idle", "resume_fn", "resumed"))
	for _, name := range []string{"done", "idle"} {
		if runs := get(t, c, "r", name).GetAnnotations()["create-runs"]; runs != "1" {
			t.Errorf("%s's finished create handler ran %s times, want once", name, runs)
		}
	}
}

// TestDeletionAndActivities checks the finalizer's life, objects already
// marked for deletion without it, event handlers, and the startup and
// cleanup activities.
func TestDeletionAndActivities(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "d")
	// Marked for deletion before any operator saw it: not ours to hold.
	createExampleWith(t, c, "d", "foreign", nil, map[string]any{})
	if _, err := c.dyn.Resource(kopfexamples).Namespace("d").Patch(context.Background(), "foreign", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":["test.kopf.dev/hold"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.dyn.Resource(kopfexamples).Namespace("d").Delete(context.Background(), "foreign", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	op := startOperator(t, c, "d", testSettings(), "testguests/reactor")
	configmaps := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	activity := func(name string) func() error {
		return func() error {
			cm, err := configmaps.Get(context.Background(), "reactor-activities", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if v, _, _ := unstructuredString(cm.Object, "data", name); v != "done" {
				return fmt.Errorf("data.%s is %q", name, v)
			}
			return nil
		}
	}
	e2etest.Eventually(t, 20*time.Second, "startup ran", activity("startup"))

	createExample(t, c, "d", "held", map[string]any{"delete": "temporary"})
	createExampleWith(t, c, "d", "watched", map[string]string{"mode": "events"}, map[string]any{})
	e2etest.Eventually(t, 20*time.Second, "created", hasMessage(t, c, "d", "held", "create_fn", "created"))
	e2etest.Eventually(t, 20*time.Second, "event handler", func() error {
		last, _, _ := unstructuredString(get(t, c, "d", "watched").Object, "status", "event_fn", "last")
		if last != "ADDED" && last != "MODIFIED" {
			return fmt.Errorf("status.event_fn.last is %q", last)
		}
		return nil
	})
	if !hasFinalizer(get(t, c, "d", "held")) {
		t.Fatal("no finalizer on an object with a delete handler")
	}
	if err := c.dyn.Resource(kopfexamples).Namespace("d").Delete(context.Background(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if obj := get(t, c, "d", "held"); obj == nil || !hasFinalizer(obj) {
		t.Fatal("the object went before its delete handler succeeded")
	}
	e2etest.Eventually(t, 20*time.Second, "released", func() error {
		if get(t, c, "d", "held") != nil {
			return fmt.Errorf("still there")
		}
		return nil
	})

	foreign := get(t, c, "d", "foreign")
	if foreign == nil || hasFinalizer(foreign) || statusMessage(foreign, "create_fn") != "" {
		t.Errorf("an object marked for deletion without our finalizer was touched: %v", foreign)
	}

	op.stop(t)
	e2etest.Eventually(t, 10*time.Second, "cleanup ran", activity("cleanup"))
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
