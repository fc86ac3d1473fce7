package app

import (
	"context"
	"errors"
	"net/http"
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

// TestFreezeResumeE2E runs `kopf-wasm run -A -P ops`: paused until the
// ClusterKopfPeering "ops" exists (mandatory peering), then paused by
// `kopf-wasm freeze` and resumed by `kopf-wasm resume`, as Kopf's commands
// do; the liveness endpoint says why it is paused each time.
func TestFreezeResumeE2E(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{
		filepath.Join(root, "examples", "crd.yaml"), filepath.Join(root, "deploy", "peering", "crds.yaml")}})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	liveness := "http://" + freeAddr(t) + "/healthz"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr e2etest.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &e2etest.LogBuffer{}, Err: &stderr},
			[]string{"run", "--kubeconfig", env.Kubeconfig, "-A", "-P", "ops", "-L", liveness, "--log-format", "plain", wasmtest.Path(t, "kopfexample")})
	}()
	status := func() string {
		resp, err := http.Get(liveness)
		if err != nil {
			return ""
		}
		_ = resp.Body.Close()
		return resp.Header.Get("Kopf-Wasm-Status")
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		e2etest.Eventually(t, 60*time.Second, what, func() error {
			select {
			case code := <-done:
				t.Fatalf("run exited with %d; stderr:\n%s", code, stderr.String())
			default:
			}
			if !cond() {
				return errors.New("not yet")
			}
			return nil
		})
	}
	// -P makes the peering mandatory: paused until its object exists.
	wait("paused until the peering exists", func() bool {
		return status() == `kopf-wasm: paused: peering "ops" is mandatory and the object does not exist`
	})
	peering := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "ClusterKopfPeering",
		"metadata": map[string]any{"name": "ops"}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "clusterkopfpeerings"}).
		Create(t.Context(), peering, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("the host handles", func() bool { return status() == "kopf-wasm: handling" })

	cli := func(args ...string) {
		t.Helper()
		var out, errs e2etest.LogBuffer
		if code := Run(t.Context(), Streams{In: strings.NewReader(""), Out: &out, Err: &errs},
			append([]string{args[0], "--kubeconfig", env.Kubeconfig}, args[1:]...)); code != 0 {
			t.Fatalf("kopf-wasm %v: exit %d: %s", args, code, errs.String())
		}
	}
	cli("freeze", "-A", "--peering", "ops", "--lifetime", "600", "--id", "ci", "--message", "maintenance")
	wait("paused by the freeze", func() bool {
		return status() == `kopf-wasm: paused: peering "ops": paused in favour of ci (priority 100, maintenance)`
	})
	if !strings.Contains(stderr.String(), "Pausing operations in favour of [<Peer ci: priority=100, lifetime=600") {
		t.Errorf("no pause in the log:\n%s", stderr.String())
	}
	cli("resume", "-A", "--peering", "ops", "--id", "ci")
	wait("resumed", func() bool { return status() == "kopf-wasm: handling" })
	if !strings.Contains(stderr.String(), "Resuming operations after the pause.") {
		t.Errorf("no resume in the log:\n%s", stderr.String())
	}
}
