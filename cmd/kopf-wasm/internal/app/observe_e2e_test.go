package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestReadyzStallE2E runs the host through a TCP proxy that silently stops
// forwarding its connections, and those it makes afterwards, while an
// object is created: once the watch has been silent for the inactivity
// timeout, /readyz answers 503 naming the stalled watch, and keeps doing
// so while the resumed watch gets no answer either, and /metrics' gauge
// kopf_wasm_watch_stalled is 1 for the resource and namespace; once the
// proxy forwards again, /readyz answers 200, the gauge is 0, and the
// object created during the stall is handled.
func TestReadyzStallE2E(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")}})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	const ns = "stall"
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	proxy := proxiedKubeconfig(t, env)
	const inactivity = 4 * time.Second
	config := writeFile(t, t.TempDir(), "settings.yaml", fmt.Sprintf("watching: {inactivityTimeout: %s}\n", inactivity))
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr e2etest.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &e2etest.LogBuffer{}, Err: &stderr},
			[]string{"run", "--kubeconfig", proxy.kubeconfig, "-n", ns, "--standalone", "--config", config,
				"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", healthAddr, wasmtest.Path(t, "kopfexample")})
	}()
	alive := func() {
		select {
		case code := <-done:
			t.Fatalf("run exited with %d; stderr:\n%s", code, stderr.String())
		default:
		}
	}
	kex := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace(ns)
	handled := func(name string) func() error {
		return func() error {
			alive()
			got, err := kex.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if msg, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "message"); msg != "hello world" {
				return fmt.Errorf("%s: status.create_fn.message %q", name, msg)
			}
			return nil
		}
	}
	create := func(name string) {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"field": "value"}}}
		if _, err := kex.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	readyz := func() (int, string) { return fetch(t, "http://"+healthAddr+"/readyz", "") }
	const stalled = `kopf_wasm_watch_stalled{namespace="stall",resource="kopfexamples.v1.kopf.dev"}`
	gauge := func() string {
		_, body := fetch(t, "http://"+metricsAddr+"/metrics", "")
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, stalled+" "); ok {
				return v
			}
		}
		return "absent"
	}

	create("before")
	e2etest.Eventually(t, 90*time.Second, "the object before the stall handled", handled("before"))
	e2etest.Eventually(t, 30*time.Second, "ready", func() error {
		if code, body := readyz(); code != http.StatusOK {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})

	frozen := proxy.Freeze()
	proxy.Hold(true)
	start := time.Now()
	create("during")
	var body string
	e2etest.Eventually(t, inactivity+30*time.Second, "/readyz failing", func() error {
		alive()
		var code int
		if code, body = readyz(); code != http.StatusServiceUnavailable {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
	t.Logf("froze %d connections; /readyz failed %s later: %s", frozen, time.Since(start).Round(time.Millisecond), strings.TrimSpace(body))
	if !strings.Contains(body, "kopfexamples.v1.kopf.dev in stall") {
		t.Errorf("/readyz says %q, want the stalled watch of kopfexamples.v1.kopf.dev in stall named", body)
	}
	if v := gauge(); v != "1" {
		t.Errorf("%s is %s while stalled, want 1", stalled, v)
	}
	// The resumed watch gets no answer either: still stalled one timeout
	// later.
	time.Sleep(inactivity + time.Second)
	if code, body := readyz(); code != http.StatusServiceUnavailable || !strings.Contains(body, "kopfexamples.v1.kopf.dev in stall") {
		t.Errorf("/readyz one inactivity timeout later, the proxy still holding: %d %s, want 503 naming the watch", code, body)
	}

	proxy.Hold(false)
	released := time.Now()
	e2etest.Eventually(t, 90*time.Second, "ready again", func() error {
		alive()
		if code, body := readyz(); code != http.StatusOK {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		if v := gauge(); v != "0" {
			return fmt.Errorf("%s is %s", stalled, v)
		}
		return nil
	})
	e2etest.Eventually(t, 90*time.Second, "the object created during the stall handled", handled("during"))
	t.Logf("ready again and the object created during the stall handled %s after the proxy forwarded again", time.Since(released).Round(time.Millisecond))

	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exited with %d; stderr:\n%s", code, stderr.String())
	}
}

// kubeProxy is a TCP proxy in front of the API server and a kubeconfig
// (the test environment's user) that goes through it.
type kubeProxy struct {
	*e2etest.Proxy
	kubeconfig string
}

func proxiedKubeconfig(t *testing.T, env *testenv.Env) kubeProxy {
	t.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := e2etest.NewProxy(t, u.Host)
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + p.Addr()
	}
	out := filepath.Join(t.TempDir(), "proxied.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return kubeProxy{Proxy: p, kubeconfig: out}
}
