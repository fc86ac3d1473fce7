package chaostest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// ns is the namespace the tests' objects live in and the hosts serve.
const ns = "chaos"

// The host's default storage (Kopf's prefix): the finalizer, the
// diff-base (in the status by default, also read from the annotation) and
// the progress annotations.
const (
	finalizer        = "kopf.zalando.org/KopfFinalizerMarker"
	diffBaseKey      = "last-handled-configuration"
	progressPrefix   = "kopf.zalando.org/"
	deleteAnnotation = "conf/delete-required" // switches the guest's delete_fn on
)

var kopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// cluster is a control plane with the kopfexamples CRD and the namespace
// "chaos", and what the hosts need to run on it.
type cluster struct {
	t      testing.TB
	env    *testenv.Env
	res    dynamic.ResourceInterface // kopfexamples in ns
	module string                    // the conformance guest
	cache  string                    // KOPF_WASM_CACHE of the hosts (compileCache)
	config string                    // the hosts' settings file
}

// newCluster starts the control plane with opts (the CRD added) and writes
// the hosts' settings (YAML, keys of docs/settings.md; may be "").
func newCluster(t testing.TB, opts testenv.Options, settings string) *cluster {
	t.Helper()
	testenv.SkipIfShort(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	module := wasmtest.Path(t, "testguests/conformance")
	opts.CRDPaths = append(opts.CRDPaths, filepath.Join(root, "examples", "crd.yaml"))
	env := testenv.Start(t, opts)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, env: env, module: module, cache: compileCache(t, module),
		res:    dynamic.NewForConfigOrDie(env.Config).Resource(kopfExamples).Namespace(ns),
		config: filepath.Join(t.TempDir(), "settings.yaml")}
	if err := os.WriteFile(c.config, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// startHost starts host process n on the cluster, serving ns with the
// cluster's settings; extra flags go before the module.
func (c *cluster) startHost(n int, kubeconfig string, extra ...string) *hostProc {
	args := append([]string{"--kubeconfig", kubeconfig, "-n", ns, "--config", c.config}, extra...)
	return startHost(c.t, n, c.cache, append(args, c.module)...)
}

// create creates an object whose delete handler is on (so it carries the
// finalizer) at spec.step 0.
func (c *cluster) create(ctx context.Context, name string) error {
	return c.createBlocking(ctx, name, 0)
}

// createBlocking is create with a create handler that sleeps this many
// seconds before it returns (the guest's spec.behave).
func (c *cluster) createBlocking(ctx context.Context, name string, seconds int) error {
	spec := map[string]any{"step": int64(0)}
	if seconds > 0 {
		spec["behave"] = map[string]any{"create_fn": map[string]any{"block": int64(seconds)}}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{deleteAnnotation: "yes"}},
		"spec":     spec,
	}}
	_, err := c.res.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// setStep changes the object's spec.step (an update for the host).
func (c *cluster) setStep(ctx context.Context, name string, step int) error {
	patch := fmt.Sprintf(`{"spec":{"step":%d}}`, step)
	_, err := c.res.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// remove deletes the object (the host releases it after delete_fn).
func (c *cluster) remove(ctx context.Context, name string) error {
	err := c.res.Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// snapshot lists the objects by name.
func (c *cluster) snapshot(ctx context.Context) (map[string]*unstructured.Unstructured, error) {
	list, err := c.res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].GetName()] = &list.Items[i]
	}
	return out, nil
}

// handledStep is spec.step of the object's diff-base: the version of the
// object whose create or update cycle the host completed last; -1 when
// there is none (the create cycle has not completed).
func handledStep(obj *unstructured.Unstructured) int {
	raw, _, _ := unstructured.NestedString(obj.Object, "status", "kopf", diffBaseKey)
	if raw == "" {
		raw = obj.GetAnnotations()[progressPrefix+diffBaseKey]
	}
	if raw == "" {
		return -1
	}
	var base struct {
		Spec struct {
			Step *float64 `json:"step"`
		} `json:"spec"`
	}
	if json.Unmarshal([]byte(raw), &base) != nil || base.Spec.Step == nil {
		return 0 // a diff-base without spec.step: the object as created
	}
	return int(*base.Spec.Step)
}

// progressSucceeded reports whether the object's progress record of a
// handler says it succeeded (a record stays until its cause's cycle ends).
func progressSucceeded(obj *unstructured.Unstructured, handler string) bool {
	raw := obj.GetAnnotations()[progressPrefix+handler]
	var rec struct {
		Success bool `json:"success"`
	}
	return raw != "" && json.Unmarshal([]byte(raw), &rec) == nil && rec.Success
}

// finalized reports whether the object carries the host's finalizer.
func finalized(obj *unstructured.Unstructured) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}

// objectName is the name of the i-th object.
func objectName(i int) string { return fmt.Sprintf("obj-%03d", i) }

// waitFor polls cond every 100 ms until it returns nil or d passes.
func waitFor(d time.Duration, cond func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
