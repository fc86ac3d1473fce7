package examplestest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

var (
	widgetsV1       = gvr("kopf.dev", "v1", "widgets")
	widgetsV1alpha1 = gvr("kopf.dev", "v1alpha1", "widgets")
	crdsGVR         = gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions")
)

// TestConversion: the host sets the Widget CRD's conversion to the
// module's convert handler, and the API server converts through it in
// both directions: a widget written as v1alpha1 is read as v1 and the
// other way round.
func TestConversion(t *testing.T) {
	const ns = "ex-conversion"
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Cleanup(func() {
		// Leave the CRD as it was for the other tests.
		_, _ = dyn.Resource(crdsGVR).Patch(context.Background(), "widgets.kopf.dev", types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/spec/conversion","value":{"strategy":"None"}}]`), metav1.PatchOptions{})
	})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	s := settings.Default()
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", "conv.kopf-wasm.dev"
	logs := runHost(t, host.Options{Modules: []string{wasmtest.Path(t, "10-conversion")}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns}, Settings: &s})
	widget := func(version string, spec map[string]any, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/" + version, "kind": "Widget",
			"metadata": map[string]any{"name": name}, "spec": spec}}
	}
	e2etest.Eventually(t, 60*time.Second, "the CRD's conversion set to the module", func() error {
		crd, err := dyn.Resource(crdsGVR).Get(context.Background(), "widgets.kopf.dev", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); s != "Webhook" {
			return fmt.Errorf("strategy %q", s)
		}
		return nil
	})
	// The API server takes a moment to use the new conversion: a size the
	// handler cannot convert is refused with its message once it does.
	e2etest.Eventually(t, 60*time.Second, "an unconvertible widget refused by the handler", func() error {
		_, err := dyn.Resource(widgetsV1alpha1).Namespace(ns).Create(context.Background(), widget("v1alpha1", map[string]any{"size": "many"}, "bad"), metav1.CreateOptions{})
		if err == nil {
			_ = dyn.Resource(widgetsV1alpha1).Namespace(ns).Delete(context.Background(), "bad", metav1.DeleteOptions{})
			return fmt.Errorf("created")
		}
		if !strings.Contains(err.Error(), "is not a number") {
			return err
		}
		return nil
	})
	// Written as v1alpha1 (stored as v1: converted on the way in).
	if _, err := dyn.Resource(widgetsV1alpha1).Namespace(ns).Create(context.Background(), widget("v1alpha1", map[string]any{"size": "3"}, "small"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(res schema.GroupVersionResource, name string, path ...string) any {
		t.Helper()
		obj, err := dyn.Resource(res).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if obj.GetAPIVersion() != res.Group+"/"+res.Version {
			t.Errorf("read as %s: apiVersion %s", res.Version, obj.GetAPIVersion())
		}
		return v
	}
	if got := read(widgetsV1, "small", "spec", "replicas"); fmt.Sprint(got) != "3" {
		t.Errorf("v1alpha1 size 3 read as v1: replicas %v", got)
	}
	if got := read(widgetsV1alpha1, "small", "spec", "size"); got != "3" {
		t.Errorf("read back as v1alpha1: size %v", got)
	}
	// Written as v1, read as v1alpha1.
	if _, err := dyn.Resource(widgetsV1).Namespace(ns).Create(context.Background(), widget("v1", map[string]any{"replicas": int64(5)}, "big"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(widgetsV1alpha1, "big", "spec", "size"); got != "5" {
		t.Errorf("v1 replicas 5 read as v1alpha1: size %v", got)
	}
	// The host read the versions the CRD serves when it set the conversion:
	// both are the handler's (kopf.Versions), so no warning.
	if l := logs.String(); !strings.Contains(l, `served="[v1alpha1 v1]"`) || strings.Contains(l, "does not declare") {
		t.Errorf("want the CRD's served versions logged and no warning about undeclared versions:\n%s", l)
	}
	kubectlBothVersions(t, ns)
}

// kubectlBothVersions reads and writes one widget with kubectl in both
// versions, naming the version-qualified resource as a user would.
func kubectlBothVersions(t *testing.T, ns string) {
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("kubectl", append([]string{"--kubeconfig", env.Kubeconfig, "-n", ns}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("kubectl %s: %v: %s%s", strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}
	getAs := func(version string) *unstructured.Unstructured {
		t.Helper()
		var u unstructured.Unstructured
		out := kubectl("", "get", "widgets."+version+".kopf.dev/by-kubectl", "-o", "json")
		if err := u.UnmarshalJSON([]byte(out)); err != nil {
			t.Fatalf("kubectl get as %s: %v: %s", version, err, out)
		}
		if u.GetAPIVersion() != "kopf.dev/"+version {
			t.Errorf("kubectl get widgets.%s.kopf.dev: apiVersion %s", version, u.GetAPIVersion())
		}
		return &u
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatalf("kubectl is not on PATH: %v", err)
	}
	// Applied as v1alpha1, read as both.
	kubectl("apiVersion: kopf.dev/v1alpha1\nkind: Widget\nmetadata: {name: by-kubectl}\nspec: {size: \"4\"}\n", "apply", "-f", "-")
	if got, _, _ := unstructured.NestedFieldNoCopy(getAs("v1").Object, "spec", "replicas"); fmt.Sprint(got) != "4" {
		t.Errorf("applied as v1alpha1 size 4, kubectl get as v1: replicas %v", got)
	}
	if got, _, _ := unstructured.NestedString(getAs("v1alpha1").Object, "spec", "size"); got != "4" {
		t.Errorf("applied as v1alpha1 size 4, kubectl get as v1alpha1: size %q", got)
	}
	// Applied again as v1 (a change), read as v1alpha1.
	kubectl("apiVersion: kopf.dev/v1\nkind: Widget\nmetadata: {name: by-kubectl}\nspec: {replicas: 6}\n", "apply", "-f", "-")
	if got, _, _ := unstructured.NestedString(getAs("v1alpha1").Object, "spec", "size"); got != "6" {
		t.Errorf("applied as v1 replicas 6, kubectl get as v1alpha1: size %q", got)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(getAs("v1").Object, "spec", "replicas"); fmt.Sprint(got) != "6" {
		t.Errorf("applied as v1 replicas 6, kubectl get as v1: replicas %v", got)
	}
	// An unconvertible size applied by kubectl is refused with the message.
	cmd := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "-n", ns, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader("apiVersion: kopf.dev/v1alpha1\nkind: Widget\nmetadata: {name: by-kubectl}\nspec: {size: lots}\n")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "is not a number") {
		t.Errorf("kubectl apply of an unconvertible size: %v: %s", err, out)
	}
}
