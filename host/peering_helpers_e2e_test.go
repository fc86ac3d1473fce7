package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// The test binary doubles as a host process (kopf-wasm run in all but the
// CLI), so that tests can SIGKILL a host.
const (
	envProcKubeconfig = "HOST_TEST_KUBECONFIG"
	envProcModule     = "HOST_TEST_MODULE"
	envProcPriority   = "HOST_TEST_PRIORITY"
	envProcLifetime   = "HOST_TEST_LIFETIME"
	envProcLeader     = "HOST_TEST_LEADER_ELECT"
	envProcCache      = "HOST_TEST_WASM_CACHE"
)

func TestMain(m *testing.M) {
	if kc := os.Getenv(envProcKubeconfig); kc != "" {
		if err := runHostProcess(kc); err != nil {
			fmt.Fprintln(os.Stderr, "host:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Every goroutine a host or operator started is gone once the tests
	// have stopped them (e2etest.LeakOptions names what is not theirs).
	goleak.VerifyTestMain(m, e2etest.LeakOptions()...)
}

// runHostProcess runs a host from the environment until SIGTERM.
func runHostProcess(kubeconfig string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s := settings.Default()
	s.Peering.Priority, _ = strconv.Atoi(os.Getenv(envProcPriority))
	if l, err := strconv.Atoi(os.Getenv(envProcLifetime)); err == nil {
		s.Peering.Lifetime = time.Duration(l) * time.Second
	}
	s.LeaderElection.Enabled = os.Getenv(envProcLeader) != ""
	s.LeaderElection.Namespace = "default"
	s.Wasm.CacheDir = os.Getenv(envProcCache)
	return host.Run(ctx, host.Options{
		Modules: []string{os.Getenv(envProcModule)}, Kubeconfig: kubeconfig, Namespaces: []string{"default"},
		Settings: &s, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
}

// peerEnv is a control plane with the kopfexamples CRD, Kopf's peering CRDs
// and the KopfPeering "default" in "default".
type peerEnv struct {
	t        testing.TB
	cache    string // the compile cache the host processes share
	env      *testenv.Env
	ex       dynamic.ResourceInterface
	peerings dynamic.ResourceInterface
}

func newPeerEnv(t testing.TB) *peerEnv {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{
		filepath.Join(root, "examples", "crd.yaml"), filepath.Join(root, "deploy", "peering", "crds.yaml"),
	}})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &peerEnv{t: t, env: env, cache: t.TempDir(),
		ex:       dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace("default"),
		peerings: dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfpeerings"}).Namespace("default"),
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfPeering",
		"metadata": map[string]any{"name": "default"}}}
	if _, err := e.peerings.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// create creates a KopfExample in "default".
func (e *peerEnv) create(name string) {
	e.t.Helper()
	if err := e.tryCreate(name); err != nil {
		e.t.Fatal(err)
	}
}

// tryCreate is create for goroutines other than the test's.
func (e *peerEnv) tryCreate(name string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{}}}
	_, err := e.ex.Create(context.Background(), obj, metav1.CreateOptions{})
	return err
}

// version is status.<id>.version of the object ("" if none).
func (e *peerEnv) version(name, id string) string {
	obj, err := e.ex.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "status", id, "version")
	return v
}

// annotation is an annotation of the object ("" if none).
func (e *peerEnv) annotation(name, key string) string {
	obj, err := e.ex.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return obj.GetAnnotations()[key]
}

// has waits until status.<id>.version of the object is want.
func (e *peerEnv) has(name, id, want string) {
	e.t.Helper()
	e.wait(fmt.Sprintf("%s handled by %s (%s)", name, want, id), func() bool { return e.version(name, id) == want })
}

// wait polls cond for 30 s.
func (e *peerEnv) wait(what string, cond func() bool) {
	e.t.Helper()
	e2eWait(e.t, 30*time.Second, what, cond)
}

// peers are the identities recorded in the KopfPeering "default".
func (e *peerEnv) peers() map[string]any {
	obj, err := e.peerings.Get(context.Background(), "default", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	return st
}

// peerHost is an in-process host.
type peerHost struct {
	logs   *e2etest.LogBuffer
	cancel context.CancelFunc
	done   chan error
}

// start runs an in-process host of module with a peering priority and
// lifetime (the rest default) until stop or the test's end.
func (e *peerEnv) start(id, module string, priority int, lifetime time.Duration, change func(*settings.Settings), liveness string) *peerHost {
	e.t.Setenv("POD_ID", id) // read when the host starts
	s := settings.Default()
	s.Peering.Priority, s.Peering.Lifetime = priority, lifetime
	if change != nil {
		change(&s)
	}
	h := &peerHost{logs: &e2etest.LogBuffer{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	opts := host.Options{Modules: []string{wasmtest.Path(e.t, module)}, Kubeconfig: e.env.Kubeconfig,
		Namespaces: []string{"default"}, Settings: &s, Logger: slog.New(slog.NewTextHandler(h.logs, nil)), Health: host.HealthOptions{Liveness: liveness}}
	go func() { h.done <- host.Run(ctx, opts) }()
	e.t.Cleanup(h.stop)
	// The identity is taken at start; wait for its record before the next
	// host changes POD_ID.
	e.wait(id+" keeps alive in the peering", func() bool { return e.peers()[id] != nil })
	return h
}

// stop ends the host (its record removed) and waits for it.
func (h *peerHost) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	<-h.done
}

// logged waits until the host's log has text.
func (h *peerHost) logged(t testing.TB, text string) {
	t.Helper()
	e2eWait(t, 30*time.Second, "log "+strconv.Quote(text), func() bool { return strings.Contains(h.logs.String(), text) })
}

// untouched checks that nobody handles the object for a while.
func (e *peerEnv) untouched(name string, d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if v := e.version(name, "create_fn"); v != "" {
			e.t.Fatalf("%s was handled by %s while every host should be paused", name, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hostProcess is a host in a child process (the test binary).
type hostProcess struct {
	cmd *exec.Cmd
	log string // its log file
}

// startProcess starts a host process of module.
func (e *peerEnv) startProcess(id, module string, env ...string) *hostProcess {
	e.t.Helper()
	log := filepath.Join(e.t.TempDir(), id+".log")
	f, err := os.Create(log)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envProcKubeconfig+"="+e.env.Kubeconfig, envProcModule+"="+wasmtest.Path(e.t, module), "POD_ID="+id)
	cmd.Env = append(cmd.Env, envProcCache+"="+e.cache)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p := &hostProcess{cmd: cmd, log: log}
	e.t.Cleanup(func() {
		p.kill()
		_ = f.Close()
	})
	return p
}

// kill SIGKILLs the process.
func (p *hostProcess) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

// logs returns the process's log so far.
func (p *hostProcess) logs() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// freeAddr is a free local address.
func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
