package testenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

var kopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// TestSmokeE2E starts the real control plane, installs the kopfexamples CRD
// and round-trips one object through client-go and kubectl.
func TestSmokeE2E(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not on PATH (%v); install kubectl, the smoke test reads objects through it", err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}

	begin := time.Now()
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")}})
	t.Logf("control plane from %s up with the CRD in %v", env.AssetsDir, time.Since(begin).Round(time.Millisecond))
	if crds := env.CRDs(); len(crds) != 1 || crds[0].Name != "kopfexamples.kopf.dev" {
		t.Fatalf("installed CRDs = %v, want kopfexamples.kopf.dev", crds)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	version, err := disc.ServerVersion()
	if err != nil {
		t.Fatalf("GET /version: %v", err)
	}
	if !strings.HasPrefix(version.GitVersion, "v1.34.") || version.Major != "1" || version.Minor != "34" {
		t.Fatalf("/version = %+v, want v1.34.x (the build script sets it through ldflags)", version)
	}
	t.Logf("/version reports %s", version.GitVersion)

	client, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	kex := client.Resource(kopfExamples).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata":   map[string]any{"name": "kopf-example-1", "labels": map[string]any{"somelabel": "somevalue"}},
		"spec": map[string]any{
			"duration": "1m",
			"field":    "value",
			"items":    []any{"item1", "item2"},
			"nested":   map[string]any{"any": map[string]any{"depth": int64(3)}},
		},
	}}
	created, err := kex.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a KopfExample: %v", err)
	}

	// The status subresource keeps unknown fields and leaves the spec alone.
	if err := unstructured.SetNestedField(created.Object, "created with 2 children", "status", "create_fn", "message"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(created.Object, "ignored on /status", "spec", "field"); err != nil {
		t.Fatal(err)
	}
	if _, err := kex.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the status: %v", err)
	}

	got, err := kex.Get(ctx, "kopf-example-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the KopfExample back: %v", err)
	}
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"spec", "field"}, "value"},
		{[]string{"spec", "duration"}, "1m"},
		{[]string{"spec", "nested", "any", "depth"}, int64(3)},
		{[]string{"status", "create_fn", "message"}, "created with 2 children"},
	} {
		v, found, err := unstructured.NestedFieldNoCopy(got.Object, c.path...)
		if err != nil || !found || v != c.want {
			t.Errorf("client-go: %s = %v (found %v, %v), want %v", strings.Join(c.path, "."), v, found, err, c.want)
		}
	}

	run := func(args ...string) []byte {
		t.Helper()
		args = append(args, "--kubeconfig", env.Kubeconfig)
		cmd := exec.CommandContext(ctx, kubectl, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}

	var list struct {
		Items []struct {
			Metadata struct{ Name, Namespace string }
			Spec     map[string]any
			Status   map[string]map[string]any
		}
	}
	if err := json.Unmarshal(run("get", "kopfexamples", "-n", "default", "-o", "json"), &list); err != nil {
		t.Fatalf("kubectl output is not a list: %v", err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("kubectl get kopfexamples: %d items, want 1", len(list.Items))
	}
	item := list.Items[0]
	if item.Metadata.Name != "kopf-example-1" || item.Spec["field"] != "value" || item.Status["create_fn"]["message"] != "created with 2 children" {
		t.Errorf("kubectl get kopfexamples: got %+v", item)
	}

	// The short name and the printer columns.
	table := string(run("get", "kex", "-n", "default"))
	for _, want := range []string{"DURATION", "MESSAGE", "kopf-example-1", "1m", "created with 2 children"} {
		if !strings.Contains(table, want) {
			t.Errorf("kubectl get kex does not show %q:\n%s", want, table)
		}
	}
	t.Logf("kubectl get kex:\n%s", table)

	// Bad CRD paths are one-line errors, and the control plane keeps running.
	notCRD := filepath.Join(t.TempDir(), "configmap.yaml")
	if err := os.WriteFile(notCRD, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		notCRD:                      "no CustomResourceDefinition found",
		filepath.Join(root, "nope"): "nope",
	} {
		err := env.InstallCRDs(path)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("InstallCRDs(%s) = %v, want one line containing %q", path, err, want)
		}
	}
	if _, err := kex.Get(ctx, "kopf-example-1", metav1.GetOptions{}); err != nil {
		t.Errorf("after the bad CRD paths: %v", err)
	}
}
