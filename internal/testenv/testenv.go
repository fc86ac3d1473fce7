// Package testenv starts a real, local Kubernetes control plane (etcd and
// kube-apiserver, and on request kube-controller-manager) for tests and for
// the demo cluster, installs CRDs from files, and hands back a rest config,
// a kubeconfig file that kubectl can use, and a way to stop it all.
//
// The binaries are not downloaded: hack/controlplane/build.sh builds them
// from pinned Go modules into a cache folder keyed by version
// (~/.cache/kopf-wasm/controlplane/kube-<v>-etcd-<v>/, root overridable with
// KOPF_WASM_CACHE) the first time, which takes minutes; after that the folder
// is reused and a control plane starts in seconds. KUBEBUILDER_ASSETS, when
// set, names a folder with the binaries and skips the build script.
//
// etcd and kube-apiserver are run by controller-runtime's envtest. The rest
// config and the kubeconfig authenticate as a member of system:masters.
//
// With [Options.ControllerManager], kube-controller-manager runs beside
// them (a subset of its controllers, see [DefaultControllers]): the garbage
// collector deletes objects whose owners are gone and deleted namespaces are
// emptied and removed, as in a real cluster. It uses the same administrator
// and envtest's service-account signing key, and is started after the CRDs
// are installed, so that the garbage collector watches them from the start
// (CRDs installed later are picked up by its 30-second resync). Nothing
// schedules or runs Pods: there is no scheduler and no kubelet.
//
// For fault tests, [Env.StopAPIServer] and [Env.StartAPIServer] restart
// kube-apiserver on the same etcd, address and certificates (the
// kubeconfig stays valid), and [Env.CompactEtcd] compacts etcd's history,
// so that a watch resuming from an older resourceVersion gets 410 Gone.
//
// Errors are one line that says what failed and what to do; they wrap the
// underlying error, so errors.Is and errors.As work on them.
package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// ModulePath is the module path of the repository's root go.mod, which
// marks the repository root.
const ModulePath = "github.com/kopf-wasm/kopf-wasm"

// AssetsEnv names a folder holding the etcd and kube-apiserver binaries,
// and kube-controller-manager for [Options.ControllerManager]. When it is
// set, the build script is not run.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// BuildScript is the control-plane build script, relative to the
// repository root.
const BuildScript = "hack/controlplane/build.sh"

// Options configure [New] and [Start].
type Options struct {
	// CRDPaths are CRD files (YAML or JSON, several documents allowed) or
	// folders of them, installed and established before New returns.
	CRDPaths []string

	// APIServerPort is the kube-apiserver's secure port on 127.0.0.1.
	// Zero picks a free port (what tests want).
	APIServerPort int

	// KubeconfigPath is where the kubeconfig is written. Empty writes it
	// into a temporary folder that Stop removes.
	KubeconfigPath string

	// StartTimeout bounds the start of each process. Zero means 60s.
	StartTimeout time.Duration

	// Output receives the output of the build script and of the control
	// plane processes. Nil discards the processes' output and sends the
	// build script's progress to os.Stderr.
	Output io.Writer

	// APIServerFlags are extra kube-apiserver flags, by name without the
	// leading dashes (e.g. "audit-log-path"). Each replaces envtest's value
	// of the same flag, if it sets one.
	APIServerFlags map[string]string

	// ControllerManager starts kube-controller-manager too, after the CRDs
	// are installed; New returns once its controllers have started. Its
	// output goes to Output, like the other processes'.
	ControllerManager bool

	// Controllers are the controllers kube-controller-manager runs, as its
	// --controllers flag takes them: names, "*" for all, "-name" to leave
	// one out. Empty means [DefaultControllers].
	Controllers []string

	// ControllerManagerFlags are extra kube-controller-manager flags, by
	// name without the leading dashes (e.g. "concurrent-gc-syncs"). Each
	// replaces testenv's value of the same flag, if it sets one.
	ControllerManagerFlags map[string]string
}

// Env is a running control plane.
type Env struct {
	// Config is the rest config of an administrator (system:masters).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the same user, for
	// kubectl --kubeconfig and KUBECONFIG.
	Kubeconfig string
	// AssetsDir is the folder the binaries were started from.
	AssetsDir string

	env         *envtest.Environment
	cm          *controllerManager // nil unless Options.ControllerManager
	certDir     string             // the API server's certificates, kept across restarts
	stopTimeout time.Duration
	crds        []*apiextensionsv1.CustomResourceDefinition
	tmpDir      string
	stopOnce    sync.Once
	stopErr     error
}

var setLoggerOnce sync.Once

// Start is [New] for tests: it fails t when the control plane cannot start
// and stops it when the test and its subtests finish. Under go test -short
// (make unit) it skips t instead: an end-to-end test never runs there, and
// make test never passes -short, so there it always runs.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	SkipIfShort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return env
}

// ShortSkipReason is what an end-to-end test says when go test -short skips
// it.
const ShortSkipReason = "end-to-end: needs the control plane (skipped by go test -short, make unit)"

// SkipIfShort skips t under go test -short. [Start] calls it; a test that
// needs the control plane without calling Start calls it first.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(ShortSkipReason)
	}
}

// ShortMain is for the TestMain of a package whose every test needs the
// control plane and which starts it before m.Run: it parses the test flags
// and, under go test -short, prints [ShortSkipReason] and reports true, and
// TestMain then exits 0 without starting anything.
func ShortMain() bool {
	flag.Parse()
	if !testing.Short() {
		return false
	}
	fmt.Println("skipped:", ShortSkipReason)
	return true
}

// New builds the control plane if needed (see the package comment), starts
// it, installs opts.CRDPaths and writes the kubeconfig. ctx bounds the build
// and the start. The caller must call [Env.Stop].
func New(ctx context.Context, opts Options) (*Env, error) {
	// envtest logs through controller-runtime's global logger, which
	// complains with a stack trace when nobody set it.
	setLoggerOnce.Do(func() { ctrllog.SetLogger(logr.Discard()) })

	for _, p := range opts.CRDPaths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("testenv: CRD path %s: %w", p, err)
		}
	}
	if opts.APIServerPort != 0 {
		if err := checkPortFree("127.0.0.1", opts.APIServerPort); err != nil {
			return nil, err
		}
	}

	assets, err := ResolveAssets(ctx, opts.Output)
	if err != nil {
		return nil, err
	}
	if opts.ControllerManager {
		if err := checkBinaries(assets, ControllerManagerBinary); err != nil {
			return nil, fmt.Errorf("%w (%s)", err, assetsSource())
		}
	}

	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	notExisting := false
	te := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		UseExistingCluster:       &notExisting,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  timeout,
	}
	// Set the paths explicitly: envtest would otherwise let
	// KUBEBUILDER_ASSETS and TEST_ASSET_* override the folder chosen here.
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	api := te.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(assets, "kube-apiserver")
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		te.ControlPlane.KubectlPath = kubectl
	}
	if opts.APIServerPort != 0 {
		api.SecureServing.ListenAddr = envtest.ListenAddr{Address: "127.0.0.1", Port: strconv.Itoa(opts.APIServerPort)}
	}
	// A folder of ours, not envtest's: envtest removes its own when the
	// API server stops, and a restart (Env.StartAPIServer) needs the same
	// certificates for the kubeconfig to stay valid.
	certDir, err := os.MkdirTemp("", "kopf-wasm-apiserver-")
	if err != nil {
		return nil, fmt.Errorf("testenv: creating a folder for the API server's certificates: %w", err)
	}
	api.CertDir = certDir
	// Watches open when the API server stops end within 2 s; without this
	// it waits for them as long as its request timeout (a minute).
	api.Configure().Set("shutdown-watch-termination-grace-period", "2s")
	for name, value := range opts.APIServerFlags {
		api.Configure().Set(strings.TrimLeft(name, "-"), value)
	}
	if opts.Output != nil {
		api.Out, api.Err = opts.Output, opts.Output
		te.ControlPlane.Etcd.Out, te.ControlPlane.Etcd.Err = opts.Output, opts.Output
	}

	started := make(chan error, 1)
	go func() {
		_, err := te.Start()
		started <- err
	}()
	select {
	case err = <-started:
	case <-ctx.Done():
		// envtest's Start takes no context: let it finish, then stop it.
		go func() {
			<-started
			_ = te.Stop()
			_ = os.RemoveAll(certDir)
		}()
		return nil, fmt.Errorf("testenv: starting the control plane from %s: %w", assets, ctx.Err())
	}
	if err != nil {
		_ = te.Stop()
		_ = os.RemoveAll(certDir)
		return nil, fmt.Errorf("testenv: starting the control plane from %s failed (set KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true to see its output): %w", assets, oneLine(err))
	}

	e := &Env{Config: te.Config, AssetsDir: assets, env: te, stopTimeout: timeout, certDir: certDir}
	if err := e.writeKubeconfig(opts.KubeconfigPath); err != nil {
		_ = e.Stop()
		return nil, err
	}
	if err := e.InstallCRDs(opts.CRDPaths...); err != nil {
		_ = e.Stop()
		return nil, err
	}
	if opts.ControllerManager {
		if e.cm, err = startControllerManager(ctx, assets, te.KubeConfig, api.CertDir, opts, timeout); err != nil {
			_ = e.Stop()
			return nil, err
		}
	}
	return e, nil
}

func (e *Env) writeKubeconfig(path string) error {
	if path == "" {
		dir, err := os.MkdirTemp("", "kopf-wasm-testenv-")
		if err != nil {
			return fmt.Errorf("testenv: creating a folder for the kubeconfig: %w", err)
		}
		e.tmpDir = dir
		path = filepath.Join(dir, "kubeconfig")
	}
	if err := os.WriteFile(path, e.env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("testenv: writing the kubeconfig: %w", err)
	}
	e.Kubeconfig = path
	return nil
}

// InstallCRDs installs the CRDs in the given files or folders and waits
// until they are established. A path that holds no CRD is an error.
func (e *Env) InstallCRDs(paths ...string) error {
	for _, p := range paths {
		crds, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{
			Paths:              []string{p},
			ErrorIfPathMissing: true,
			MaxTime:            30 * time.Second,
		})
		if err != nil {
			return fmt.Errorf("testenv: installing the CRDs in %s: %w", p, oneLine(err))
		}
		if len(crds) == 0 {
			return fmt.Errorf("testenv: installing the CRDs in %s: no CustomResourceDefinition found (files must end in .yaml, .yml or .json)", p)
		}
		e.crds = append(e.crds, crds...)
	}
	return nil
}

// CRDs lists the CRDs installed so far through this Env.
func (e *Env) CRDs() []*apiextensionsv1.CustomResourceDefinition {
	return e.crds
}

// Stop stops the processes, removes their data and the temporary
// kubeconfig. It is safe to call more than once.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		if e.cm != nil {
			// First, while the API server it talks to is still up.
			errs = append(errs, e.cm.stop(e.stopTimeout))
		}
		if err := e.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("testenv: stopping the control plane: %w", oneLine(err)))
		}
		e.stopErr = oneLine(errors.Join(errs...))
		if e.tmpDir != "" {
			_ = os.RemoveAll(e.tmpDir)
		}
		_ = os.RemoveAll(e.certDir)
	})
	return e.stopErr
}

// ResolveAssets returns the folder with the control-plane binaries:
// $KUBEBUILDER_ASSETS if set, otherwise the folder printed by the
// repository's build script, which builds the binaries if they are missing.
// The script's progress goes to progress (os.Stderr if nil). The folder is
// checked for etcd and kube-apiserver only: kube-controller-manager is
// optional (envtest's own downloads do not have it), and [New] checks for it
// when it is asked to start it.
func ResolveAssets(ctx context.Context, progress io.Writer) (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		if err := CheckAssets(dir); err != nil {
			return "", fmt.Errorf("%w (%s)", err, assetsSource())
		}
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := runBuildScript(ctx, filepath.Join(root, BuildScript), progress)
	if err != nil {
		return "", err
	}
	if err := CheckAssets(dir); err != nil {
		return "", fmt.Errorf("%w (%s)", err, assetsSource())
	}
	return dir, nil
}

// ErrMissingBinaries is wrapped by the error [CheckAssets] returns.
var ErrMissingBinaries = errors.New("control-plane binaries missing")

// CheckAssets reports whether dir holds executable etcd and kube-apiserver
// binaries.
func CheckAssets(dir string) error {
	return checkBinaries(dir, "etcd", "kube-apiserver")
}

// checkBinaries reports whether dir holds the named executables.
func checkBinaries(dir string, names ...string) error {
	var missing []string
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("testenv: %w: no executable %s in %s; run %s to build them",
			ErrMissingBinaries, strings.Join(missing, " or "), dir, BuildScript)
	}
	return nil
}

// assetsSource says where the assets folder came from, for errors about it.
func assetsSource() string {
	if os.Getenv(AssetsEnv) != "" {
		return "from " + AssetsEnv + "; unset it to build them with " + BuildScript
	}
	return "the folder printed by " + BuildScript
}

func runBuildScript(ctx context.Context, script string, progress io.Writer) (string, error) {
	if progress == nil {
		progress = os.Stderr
	}
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("testenv: control-plane build script: %w; set %s to a folder with etcd and kube-apiserver", err, AssetsEnv)
	}
	var stdout bytes.Buffer
	stderr := &lastLine{w: progress}
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		why := stderr.last()
		if why == "" {
			why = "see its output above"
		}
		return "", fmt.Errorf("testenv: %s failed (%s): %w", BuildScript, why, err)
	}
	out := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if out == "" {
		return "", fmt.Errorf("testenv: %s printed no folder", BuildScript)
	}
	return out, nil
}

// RepoRoot returns the root of the kopf-wasm checkout: the nearest folder,
// above the working directory or above this source file, whose go.mod
// declares [ModulePath].
func RepoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, s := range starts {
		if root, ok := findRepoRoot(s); ok {
			return root, nil
		}
	}
	return "", fmt.Errorf("testenv: cannot find the kopf-wasm checkout (a go.mod with module %s) above %s; run from inside the checkout or set %s",
		ModulePath, strings.Join(starts, " or "), AssetsEnv)
}

func findRepoRoot(dir string) (string, bool) {
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == ModulePath {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// modulePath returns the module path declared in a go.mod file, or "".
func modulePath(gomod string) string {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest = strings.TrimSpace(rest)
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = strings.TrimSpace(rest[:i])
			}
			if unq, err := strconv.Unquote(rest); err == nil {
				return unq
			}
			return rest
		}
	}
	return ""
}

// ErrPortInUse is wrapped by the error returned when the requested API
// server port is taken.
var ErrPortInUse = errors.New("port in use")

func checkPortFree(host string, port int) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("testenv: %w: cannot listen on %s for the API server (%v); stop whatever uses it or choose another port (0 picks a free one)",
			ErrPortInUse, addr, err)
	}
	return l.Close()
}

// oneLine keeps an error's message on one line (envtest's aggregated errors
// span several) while still wrapping it.
func oneLine(err error) error {
	if err == nil || !strings.ContainsAny(err.Error(), "\r\n") {
		return err
	}
	return joinedLines{err}
}

type joinedLines struct{ err error }

func (j joinedLines) Error() string {
	var parts []string
	for _, line := range strings.FieldsFunc(j.err.Error(), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

func (j joinedLines) Unwrap() error { return j.err }

// lastLine passes writes through and remembers the last non-empty line.
type lastLine struct {
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf = append(l.buf, p...)
	if len(l.buf) > 4096 {
		l.buf = l.buf[len(l.buf)-4096:]
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lastLine) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(l.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
