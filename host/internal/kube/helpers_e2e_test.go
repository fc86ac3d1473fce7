package kube

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// One control plane serves every end-to-end test of the package; it starts
// with the first test that needs it, so unit tests run without it.
var (
	envOnce   sync.Once
	sharedEnv *testenv.Env
	envErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEnv != nil {
		if err := sharedEnv.Stop(); err != nil {
			println(err.Error())
		}
	}
	os.Exit(code)
}

var kexGVR = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// cluster returns the shared control plane, with examples/crd.yaml
// installed, starting it if needed. Skipped with -short.
func cluster(t *testing.T) *testenv.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: needs a control plane")
	}
	envOnce.Do(func() {
		root, err := testenv.RepoRoot()
		if err != nil {
			envErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		sharedEnv, envErr = testenv.New(ctx, testenv.Options{
			CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")},
		})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return sharedEnv
}

// newClient returns a Client on the shared control plane with short
// retries, and a plain dynamic client for setting the scene.
func newClient(t *testing.T) (*Client, dynamic.Interface) {
	t.Helper()
	env := cluster(t)
	c, err := New(env.Config, withSettings(func(s *settings.Settings) {
		s.Kube.ErrorBackoffs = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}
		s.Kube.DiscoveryRefresh = time.Millisecond
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c, dynamic.NewForConfigOrDie(env.Config)
}

// namespace creates a namespace for one test.
func namespace(t *testing.T, dyn dynamic.Interface, name string) string {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	if _, err := dyn.Resource(namespacesGVR).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// dropNamespace deletes a namespace and finalizes it at once (there is no
// namespace controller in the test control plane to do it).
func dropNamespace(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	ctx := t.Context()
	if err := dyn.Resource(namespacesGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := dyn.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedStringSlice(ns.Object, nil, "spec", "finalizers")
	if _, err := dyn.Resource(namespacesGVR).Update(ctx, ns, metav1.UpdateOptions{}, "finalize"); err != nil {
		t.Fatal(err)
	}
}

// kex builds a KopfExample.
func kex(namespace, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"field": "value"},
	}}
	u.SetLabels(labels)
	return u
}

func create(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually polls cond until it holds or 20 seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recorder collects the events a Handler receives.
type recorder struct {
	ch chan Event
}

func newRecorder() *recorder { return &recorder{ch: make(chan Event, 1000)} }

func (r *recorder) handle(ev Event) { r.ch <- ev }

// next waits for the next event whose object is named name.
func (r *recorder) next(t *testing.T, name string) Event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-r.ch:
			if ev.Object.GetName() == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event for %s within 20s", name)
		}
	}
}

// quiet fails if an event arrives within d.
func (r *recorder) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev := <-r.ch:
		t.Errorf("unexpected event %s %s/%s", ev.Type, ev.Object.GetNamespace(), ev.Object.GetName())
	case <-time.After(d):
	}
}

func unstructuredString(u *unstructured.Unstructured, fields ...string) (string, bool, error) {
	return unstructured.NestedString(u.Object, fields...)
}
