package polyglottest

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
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// env is the control plane all tests of the package share (with
// kube-controller-manager, whose garbage collector deletes adopted
// children); dyn is an administrator's client.
var (
	env *testenv.Env
	dyn dynamic.Interface
)

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
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		env, err = testenv.New(ctx, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml"),
			filepath.Join(root, "examples", "10-conversion", "crd.yaml"),
			filepath.Join(root, "examples", "python", "ephemeral", "crd.yaml")}, ControllerManager: true})
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

var (
	kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	pods         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configmaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// module is one language's build of an example.
type module struct {
	lang string // "go", guestwasm.Rust, guestwasm.AssemblyScript, guestwasm.Python
	path func(t *testing.T) string
}

// modules returns the example's module in each language: Go's from
// examples/<goPkg>, the others' from examples/<lang>/<name>.
func modules(goPkg, name string, langs ...string) []module {
	out := []module{{"go", func(t *testing.T) string { return wasmtest.Path(t, goPkg) }}}
	for _, lang := range langs {
		out = append(out, module{lang, func(t *testing.T) string { return guestwasm.Path(t, lang, name) }})
	}
	return out
}

// operator runs the module at path in a new namespace ns until the test
// ends, with short retry backoffs, and returns its logs.
func operator(t *testing.T, ns, path string) *e2etest.LogBuffer {
	t.Helper()
	return operatorWith(t, ns, path, nil)
}

// operatorWith is operator with settings changed by tune (nil: none).
func operatorWith(t *testing.T, ns, path string, tune func(*settings.Settings)) *e2etest.LogBuffer {
	t.Helper()
	return operatorOpts(t, ns, host.Options{Modules: []string{path}}, tune)
}

// operatorOpts is operatorWith with the host's options opts (its modules
// and registry; the rest is filled in).
func operatorOpts(t *testing.T, ns string, opts host.Options, tune func(*settings.Settings)) *e2etest.LogBuffer {
	t.Helper()
	create(t, namespaces, "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	s := settings.Default()
	s.Execution.DefaultBackoff = time.Second
	if tune != nil {
		tune(&s)
	}
	logs := &e2etest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		opts.Kubeconfig, opts.Namespaces = env.Kubeconfig, []string{ns}
		opts.Settings, opts.Logger = &s, slog.New(slog.NewTextHandler(logs, nil))
		done <- host.Run(ctx, opts)
	}()
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

func create(t *testing.T, res schema.GroupVersionResource, ns string, obj map[string]any) {
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

func mergePatch(t *testing.T, res schema.GroupVersionResource, ns, name, patch string) {
	t.Helper()
	if _, err := dyn.Resource(res).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, res schema.GroupVersionResource, ns, name string) {
	t.Helper()
	if err := dyn.Resource(res).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hasValue is a condition: the object's field at path prints as want.
func hasValue(t *testing.T, res schema.GroupVersionResource, ns, name, want string, path ...string) func() error {
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

// gone is a condition: the object does not exist.
func gone(t *testing.T, res schema.GroupVersionResource, ns, name string) func() error {
	return func() error {
		if obj := get(t, res, ns, name); obj != nil {
			return fmt.Errorf("%s/%s still exists (finalizers %v)", ns, name, obj.GetFinalizers())
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
