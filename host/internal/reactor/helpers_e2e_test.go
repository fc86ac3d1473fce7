package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// cluster is a control plane with the kopfexamples CRD and a dynamic client.
type cluster struct {
	env *testenv.Env
	dyn dynamic.Interface
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")}})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{env: env, dyn: dyn}
}

// operator is a running reactor with its kube client.
type operator struct {
	*reactor.Operator
	kube   *kube.Client
	cancel context.CancelFunc
	done   chan error
}

// startOperator runs the reactor with the given modules (package paths in
// the examples module) in namespace ns until the test ends or stop is called.
func startOperator(t *testing.T, c *cluster, ns string, set settings.Settings, pkgs ...string) *operator {
	t.Helper()
	rt := newRuntime(t)
	var mods []*wasmrt.Module
	for _, pkg := range pkgs {
		mods = append(mods, load(t, rt, filepath.Base(pkg), pkg))
	}
	kc := newKube(t, c)
	return run(t, kc, newOperator(t, kc, ns, set, mods...))
}

// run runs op until the test ends or stop is called.
func run(t *testing.T, kc *kube.Client, op *reactor.Operator) *operator {
	ctx, cancel := context.WithCancel(context.Background())
	o := &operator{Operator: op, kube: kc, cancel: cancel, done: make(chan error, 1)}
	go func() { o.done <- op.Run(ctx) }()
	t.Cleanup(func() { o.stop(t) })
	return o
}

// newRuntime is a wasm runtime with a short call timeout, closed when the
// test ends.
func newRuntime(t *testing.T) *wasmrt.Runtime {
	t.Helper()
	rt, err := wasmrt.New(wasmrt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// load loads the module built from pkg, a package path in the examples
// module.
func load(t *testing.T, rt *wasmrt.Runtime, name, pkg string) *wasmrt.Module {
	t.Helper()
	mod, err := rt.Load(context.Background(), name, wasmtest.Bytes(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func newKube(t *testing.T, c *cluster) *kube.Client {
	t.Helper()
	cfg, err := kube.LoadConfig(c.env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kube.New(cfg, kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// newProxiedKube is newKube with set and log (nil: slog's default), through
// a TCP proxy in front of the API server (e2etest.Proxy, which the stall
// tests freeze).
func newProxiedKube(t *testing.T, c *cluster, set *settings.Settings, log *slog.Logger) (*e2etest.Proxy, *kube.Client) {
	t.Helper()
	u, err := url.Parse(c.env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := e2etest.NewProxy(t, u.Host)
	cfg, err := kube.LoadConfig(c.env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = "https://" + proxy.Addr()
	kc, err := kube.New(cfg, kube.Options{Settings: set, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return proxy, kc
}

func newOperator(t *testing.T, kc *kube.Client, ns string, set settings.Settings, mods ...*wasmrt.Module) *reactor.Operator {
	t.Helper()
	return newLoggedOperator(t, kc, ns, set, nil, mods...)
}

// newLoggedOperator is newOperator with a logger (nil: slog's default).
func newLoggedOperator(t *testing.T, kc *kube.Client, ns string, set settings.Settings, log *slog.Logger, mods ...*wasmrt.Module) *reactor.Operator {
	t.Helper()
	namespaces, err := kube.ParseNamespaces(ns)
	if err != nil {
		t.Fatal(err)
	}
	op, err := reactor.New(context.Background(), reactor.Options{Kube: kc, Modules: mods, Namespaces: namespaces, Settings: set, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func (o *operator) stop(t *testing.T) {
	o.cancel()
	select {
	case err := <-o.done:
		if err != nil {
			t.Errorf("operator: %v", err)
		}
		o.done <- nil
	case <-time.After(30 * time.Second):
		t.Error("the operator did not stop within 30s")
	}
}

func createNamespace(t *testing.T, c *cluster, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	_, err := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func createExample(t *testing.T, c *cluster, ns, name string, spec map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name}, "spec": spec}}
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// get reads an example object; nil when it does not exist.
func get(t *testing.T, c *cluster, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := c.dyn.Resource(kopfexamples).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// statusMessage is status.<id>.message of an object.
func statusMessage(obj *unstructured.Unstructured, id string) string {
	msg, _, _ := unstructured.NestedString(obj.Object, "status", id, "message")
	return msg
}

func hasMessage(t *testing.T, c *cluster, ns, name, id, want string) func() error {
	return func() error {
		obj := get(t, c, ns, name)
		if obj == nil {
			return fmt.Errorf("%s/%s does not exist", ns, name)
		}
		if got := statusMessage(obj, id); got != want {
			return fmt.Errorf("status.%s.message is %q, want %q", id, got, want)
		}
		return nil
	}
}

// logRecorder is a slog handler that keeps every record's message with
// the name of the object it is about (the reactor's "object" group), for
// tests to search.
type logRecorder struct {
	mu      sync.Mutex
	records []string // "name: message"
	// seen, if set, is told of every record as it is logged (in the
	// logging goroutine, before the operator goes on).
	seen func(name, message string)
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }

// Handle keeps the record.
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	name := ""
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "object" { // the reactor's objectAttrs
			for _, ga := range a.Value.Group() {
				if ga.Key == "name" {
					name = ga.Value.String()
				}
			}
		}
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, name+": "+rec.Message)
	seen := r.seen
	r.mu.Unlock()
	if seen != nil {
		seen(name, rec.Message)
	}
	return nil
}

// about returns the messages about the object name that contain text.
func (r *logRecorder) about(name, text string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		if strings.HasPrefix(rec, name+": ") && strings.Contains(rec, text) {
			out = append(out, rec)
		}
	}
	return out
}
