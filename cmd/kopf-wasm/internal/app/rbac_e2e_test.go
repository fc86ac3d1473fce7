package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestRBACE2E applies what `kopf-wasm rbac` prints for the example module
// to the real control plane, then runs the operator as the ServiceAccount
// (the admin's kubeconfig impersonating it) and shows that the rules are
// enough: the object gets handled, and nothing else is allowed.
func TestRBACE2E(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")}})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	mod := wasmtest.Path(t, "kopfexample")
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}

	r := run(t.Context(), "", "rbac", mod)
	if r.code != 0 {
		t.Fatalf("rbac: %+v", r)
	}
	for _, doc := range strings.Split(r.out, "\n---\n") {
		applyDoc(t, dyn, doc)
	}
	const user = "system:serviceaccount:default:kopf-wasm-kopfexample"
	kubeconfig := impersonating(t, env.Kubeconfig, user)

	// The ServiceAccount may not do what the rules do not say.
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	limited, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = limited.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("default").List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing secrets as %s: %v; want forbidden", user, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr e2etest.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &e2etest.LogBuffer{}, Err: &stderr},
			[]string{"run", "--kubeconfig", kubeconfig, "--standalone", "-n", "default", "--log-format", "plain", mod})
	}()
	kex := dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "rbac-1"}, "spec": map[string]any{"field": "value"}}}
	if _, err := kex.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var message string
	var finalizers []string
	for deadline := time.Now().Add(60 * time.Second); message != "hello world" && time.Now().Before(deadline); {
		select {
		case code := <-done:
			t.Fatalf("run exited with %d; stderr:\n%s", code, stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
		if got, err := kex.Get(t.Context(), "rbac-1", metav1.GetOptions{}); err == nil {
			message, _, _ = unstructured.NestedString(got.Object, "status", "create_fn", "message")
			finalizers = got.GetFinalizers()
		}
	}
	if message != "hello world" || len(finalizers) == 0 {
		t.Fatalf("as %s: status.create_fn.message %q, finalizers %q after 60s; stderr:\n%s", user, message, finalizers, stderr.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exited with %d; stderr:\n%s", code, stderr.String())
	}
	if logs := stderr.String(); strings.Contains(logs, "forbidden") {
		t.Errorf("the operator was refused something:\n%s", logs)
	}
}

// applyDoc creates one generated object (a ServiceAccount or an RBAC object).
func applyDoc(t *testing.T, dyn dynamic.Interface, doc string) {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("%v in:\n%s", err, doc)
	}
	plurals := map[string]string{"ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles",
		"ClusterRoleBinding": "clusterrolebindings", "Role": "roles", "RoleBinding": "rolebindings"}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		t.Fatal(err)
	}
	ri := dyn.Resource(gv.WithResource(plurals[u.GetKind()]))
	var c dynamic.ResourceInterface = ri
	if ns := u.GetNamespace(); ns != "" {
		c = ri.Namespace(ns)
	}
	if _, err := c.Create(t.Context(), &u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// impersonating writes a copy of the kubeconfig whose users act as user.
func impersonating(t *testing.T, path, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = user
	}
	out := filepath.Join(t.TempDir(), "impersonating.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}
