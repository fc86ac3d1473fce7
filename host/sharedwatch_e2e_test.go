package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// readsPolicy logs every list and watch of kopfexamples (issue 34: shared
// watching), nothing else.
const readsPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [list, watch]
  resources:
  - group: kopf.dev
    resources: [kopfexamples]
- level: None
`

// TestSharedWatch shows that modules handling the same resource share
// one watch and one cache: a host serving two modules on kopfexamples
// (kopfexample and 03-fields-filters) lists and watches them with as many
// requests as a host serving one, read from the API server's audit log.
// Each host serves its own namespace under its own user agent; each is
// asked to handle one object, so both watches are known to be running
// when the requests are counted.
func TestSharedWatch(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy, auditLog := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(readsPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")},
		APIServerFlags: map[string]string{"audit-policy-file": policy, "audit-log-path": auditLog, "audit-log-maxsize": "1000000"}})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "wasm-cache")
	one := []string{wasmtest.Path(t, "kopfexample")}
	two := append([]string{wasmtest.Path(t, "03-fields-filters")}, one...)
	for _, c := range []struct {
		ns      string
		modules []string
	}{{"one-module", one}, {"two-modules", two}} {
		if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		runShared(t, env, c.ns, cache, c.modules)
		handled(t, dyn, c.ns)
	}
	counts := readsByAgent(t, auditLog)
	oneReads, twoReads := counts["kopf-wasm-one-module"], counts["kopf-wasm-two-modules"]
	t.Logf("list and watch requests of kopfexamples: one module %v, two modules %v", oneReads, twoReads)
	if oneReads.total() == 0 {
		t.Fatalf("the audit log shows no list or watch of kopfexamples by the one-module host: %v", counts)
	}
	if oneReads != twoReads {
		t.Errorf("two modules on kopfexamples read them with %v, one module with %v: want the same (one shared watch)", twoReads, oneReads)
	}
}

// runShared runs a host serving modules in namespace ns until the test
// ends, with the user agent kopf-wasm-<ns>.
func runShared(t *testing.T, env *testenv.Env, ns, cache string, modules []string) {
	t.Helper()
	set := settings.Default()
	set.Kube.UserAgent = "kopf-wasm-" + ns
	set.Wasm.CacheDir = cache
	// No stream is resumed for silence while the test runs: every watch
	// request in the log is one the host needed.
	set.Watching.InactivityTimeout = 0
	logs := &e2etest.LogBuffer{}
	opts := host.Options{Modules: modules, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns}, Settings: &set,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- host.Run(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host in %s: %v\n%s", ns, err, logs)
		}
	})
}

// handled creates an object in ns and waits until kopfexample's create_fn
// handled it.
func handled(t *testing.T, dyn dynamic.Interface, ns string) {
	t.Helper()
	ex := dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "probe"}, "spec": map[string]any{"size": 1}}}
	if _, err := ex.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 2*time.Minute, "the object in "+ns+" handled", func() error {
		got, err := ex.Get(context.Background(), "probe", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if msg, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "message"); msg == "" {
			return fmt.Errorf("no status.create_fn.message yet")
		}
		return nil
	})
}

// reads counts one client's list and watch requests.
type reads struct{ lists, watches int }

func (r reads) total() int { return r.lists + r.watches }

func (r reads) String() string { return fmt.Sprintf("%d lists, %d watches", r.lists, r.watches) }

// readsByAgent counts the list and watch requests in the audit log by
// user agent (its first word: the product), each request once.
func readsByAgent(t *testing.T, path string) map[string]reads {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	out := map[string]reads{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct {
			AuditID   string `json:"auditID"`
			Verb      string `json:"verb"`
			UserAgent string `json:"userAgent"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || seen[ev.AuditID] {
			continue
		}
		seen[ev.AuditID] = true
		agent, _, _ := strings.Cut(ev.UserAgent, " ")
		r := out[agent]
		switch ev.Verb {
		case "list":
			r.lists++
		case "watch":
			r.watches++
		}
		out[agent] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
