package examplestest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// env is the control plane all tests of the package share; dyn is an
// administrator's client.
var (
	env *testenv.Env
	dyn dynamic.Interface
)

// crds are the CRD files the examples need, relative to the repository root.
var crds = []string{"examples/crd.yaml", "examples/05-database/crd.yaml", "examples/10-conversion/crd.yaml"}

func TestMain(m *testing.M) {
	if testenv.ShortMain() {
		os.Exit(0)
	}
	os.Exit(func() int {
		root, err := wasmtest.RepoRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var paths []string
		for _, p := range crds {
			paths = append(paths, filepath.Join(root, p))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// The controller manager's garbage collector deletes the examples'
		// children when their parents go.
		env, err = testenv.New(ctx, testenv.Options{CRDPaths: paths, ControllerManager: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = env.Stop() }()
		if dyn, err = dynamic.NewForConfig(env.Config); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

// gvr names a resource.
func gvr(group, version, plural string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
}

var (
	kopfexamples = gvr("kopf.dev", "v1", "kopfexamples")
	configmaps   = gvr("", "v1", "configmaps")
	pods         = gvr("", "v1", "pods")
)

// operator runs the example pkg (a package path in the examples module)
// in a new namespace ns until the test ends, with short retry backoffs, and
// returns its logs.
func operator(t *testing.T, ns, pkg string) *e2etest.LogBuffer {
	t.Helper()
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	s := settings.Default()
	s.Execution.DefaultBackoff = time.Second
	return runHost(t, host.Options{Modules: []string{wasmtest.Path(t, pkg)}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns}, Settings: &s})
}

// runHost runs host.Run with opts (and a logger into the returned buffer)
// until the test ends, and fails the test if it does not stop cleanly
// within 30 s; the logs are shown when the test failed.
func runHost(t *testing.T, opts host.Options) *e2etest.LogBuffer {
	t.Helper()
	logs := &e2etest.LogBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- host.Run(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the operator did not stop within 30s")
		}
		if t.Failed() {
			t.Logf("operator logs:\n%s", logs.String())
		}
	})
	return logs
}

// createObject creates obj (a JSON-like map) in ns ("" for cluster-scoped).
func createObject(t *testing.T, res schema.GroupVersionResource, ns string, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	var err error
	if ns == "" {
		_, err = dyn.Resource(res).Create(context.Background(), u, metav1.CreateOptions{})
	} else {
		_, err = dyn.Resource(res).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// kex is a KopfExample with labels and a spec.
func kex(name string, labels map[string]any, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name, "labels": labels}, "spec": spec}
}

// get reads an object; nil when it does not exist.
func get(t *testing.T, res schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := dyn.Resource(res).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// deleteObject deletes an object (in the background: its dependents are
// left to the garbage collector).
func deleteObject(t *testing.T, res schema.GroupVersionResource, ns, name string) {
	t.Helper()
	if err := dyn.Resource(res).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// child names an object for goneAll.
type child struct {
	res  schema.GroupVersionResource
	name string
}

// goneAll is a condition: none of the objects exists.
func goneAll(t *testing.T, ns string, objs ...child) func() error {
	return func() error {
		var left []string
		for _, o := range objs {
			if get(t, o.res, ns, o.name) != nil {
				left = append(left, o.res.Resource+"/"+o.name)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		return nil
	}
}

// mergePatch applies a JSON merge patch to an object.
func mergePatch(t *testing.T, res schema.GroupVersionResource, ns, name, patch string) {
	t.Helper()
	if _, err := dyn.Resource(res).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hasString is a condition: the object's string field at path equals want.
func hasString(t *testing.T, res schema.GroupVersionResource, ns, name, want string, path ...string) func() error {
	return func() error {
		obj := get(t, res, ns, name)
		if obj == nil {
			return fmt.Errorf("%s/%s does not exist", ns, name)
		}
		if got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...); fmt.Sprint(got) != want {
			return fmt.Errorf("%s is %v, want %q", strings.Join(path, "."), got, want)
		}
		return nil
	}
}

// logged is a condition: the logs contain every text.
func logged(logs *e2etest.LogBuffer, texts ...string) func() error {
	return func() error {
		s := logs.String()
		for _, text := range texts {
			if !strings.Contains(s, text) {
				return fmt.Errorf("no log line with %q", text)
			}
		}
		return nil
	}
}

// hasEvent is a condition: an Event about the named object has text.
func hasEvent(ns, name, text string) func() error {
	return func() error {
		list, err := dyn.Resource(gvr("", "v1", "events")).Namespace(ns).
			List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		var seen []string
		for _, ev := range list.Items {
			msg, _, _ := unstructured.NestedString(ev.Object, "message")
			if strings.Contains(msg, text) {
				return nil
			}
			seen = append(seen, msg)
		}
		return fmt.Errorf("no event with %q among %q", text, seen)
	}
}
