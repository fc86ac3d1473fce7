package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestRunE2E runs `kopf-wasm run` in-process against the real control
// plane with the example module, creates a KopfExample, waits for the
// create handler's result on the object, checks the liveness endpoint and
// stops the operator as SIGINT would (by ending the context). It logs in
// Kopf's own layout (--log-format kopf) at -v, where Kopf's lifecycle
// lines are.
func TestRunE2E(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")}})
	mod := wasmtest.Path(t, "kopfexample")
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	t.Setenv("KOPF_WASM_NAMESPACE", "default") // -n from the environment
	liveness := "http://" + freeAddr(t) + "/healthz"
	config := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(config, []byte("execution:\n  workers: 4\nposting:\n  eventNamePrefix: run-e2e-\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr e2etest.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr},
			[]string{"run", "--kubeconfig", env.Kubeconfig, "--standalone", "-L", liveness, "--log-format", "kopf", "-v", "--config", config, mod})
	}()

	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	kex := dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "kopf-example-1"}, "spec": map[string]any{"field": "value"}}}
	if _, err := kex.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var message string
	deadline := time.Now().Add(60 * time.Second)
	for message != "hello world" && time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("run exited with %d before handling the object; stderr:\n%s", code, stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
		got, err := kex.Get(t.Context(), "kopf-example-1", metav1.GetOptions{})
		if err == nil {
			message, _, _ = unstructured.NestedString(got.Object, "status", "create_fn", "message")
		}
	}
	if message != "hello world" {
		t.Fatalf("status.create_fn.message = %q after 60s; stderr:\n%s", message, stderr.String())
	}
	if code := httpStatus(t, liveness); code != http.StatusOK {
		t.Errorf("liveness while running: %d, want 200", code)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("run exited with %d after the context ended; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return within 30s of the context ending")
	}
	logs := stderr.String()
	// -v adds what Kopf's debug log shows: the watch events and the
	// patches with their bodies.
	for _, want := range []string{"module loaded", "And here we are! Creating", "stopped",
		"Received a watch event ADDED", `Patching status with: {"status":{"create_fn":{"message":"hello world"}`,
		"kopf.objects         [DEBUG   ] [default/kopf-example-1] Adding the finalizer, thus preventing the actual deletion.",
		"kopf.objects         [DEBUG   ] [default/kopf-example-1] Creation is in progress: {",
		"kopf.objects         [INFO    ] [default/kopf-example-1] Handler 'create_fn' succeeded.",
		"kopf.objects         [INFO    ] [default/kopf-example-1] Creation is processed: 1 succeeded; 0 failed.",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "whole cluster") {
		t.Errorf("KOPF_WASM_NAMESPACE was not applied:\n%s", logs)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(fmt.Errorf("liveness: %w", err))
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
