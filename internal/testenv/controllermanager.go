package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ControllerManagerBinary is the file name of kube-controller-manager in
// the assets folder.
const ControllerManagerBinary = "kube-controller-manager"

// DefaultControllers returns the kube-controller-manager controllers that
// run when [Options.Controllers] is empty, by their --controllers names:
//
//   - garbagecollector: deletes objects whose owners are gone;
//   - namespace: deletes a deleted namespace's content, then the namespace;
//   - serviceaccount, serviceaccount-token: the default ServiceAccount of
//     every namespace, and tokens for Secrets of type
//     kubernetes.io/service-account-token (signed with envtest's key);
//   - persistentvolume-binder, pvc-protection, pv-protection: PVC binding
//     (claims stay Pending: there is no provisioner) and the protection
//     finalizers the API server adds, without which a PVC, and so a
//     namespace holding one, could never be deleted.
//
// Not in the list: the workload controllers (deployment, replicaset,
// statefulset, daemonset, job, cronjob), which would make Pods that never
// run (there is no scheduler and no kubelet), and root-ca-cert-publisher,
// which puts a kube-root-ca.crt ConfigMap into every namespace. Pass "*"
// for every controller.
func DefaultControllers() []string {
	return []string{
		"garbagecollector", "namespace",
		"serviceaccount", "serviceaccount-token",
		"persistentvolume-binder", "pvc-protection", "pv-protection",
	}
}

// saKeyFile is the service-account signing key envtest writes into the API
// server's certificate folder; the API server verifies tokens with the
// matching certificate (its --service-account-key-file).
const saKeyFile = "sa-signer.key"

// controllerManager is a running kube-controller-manager.
type controllerManager struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error         // the process's exit, valid after done
	dir     string        // its kubeconfig and serving certificates
}

// controllerManagerArgs returns kube-controller-manager's flags: envtest's
// administrator for every client, no leader election, the given controllers
// (DefaultControllers if none), the API server's service-account signing
// key, serving on 127.0.0.1:port with a self-signed certificate in certDir;
// then extra, by name without the leading dashes, each replacing the
// default of the same name. The result is sorted by flag name.
func controllerManagerArgs(kubeconfig, saKey, certDir string, port int, controllers []string, extra map[string]string) []string {
	if len(controllers) == 0 {
		controllers = DefaultControllers()
	}
	flags := map[string]string{
		"kubeconfig":                       kubeconfig,
		"authentication-kubeconfig":        kubeconfig,
		"authorization-kubeconfig":         kubeconfig,
		"leader-elect":                     "false",
		"controllers":                      strings.Join(controllers, ","),
		"service-account-private-key-file": saKey,
		"bind-address":                     "127.0.0.1",
		"secure-port":                      strconv.Itoa(port),
		"cert-dir":                         certDir,
	}
	for name, value := range extra {
		flags[strings.TrimLeft(name, "-")] = value
	}
	args := make([]string, 0, len(flags))
	for name, value := range flags {
		args = append(args, "--"+name+"="+value)
	}
	sort.Strings(args)
	return args
}

// startControllerManager starts kube-controller-manager from assets against
// the API server whose administrator kubeconfig is kubeconfig and whose
// certificate folder (with envtest's service-account key) is certDir, and
// waits until its controllers have started. ctx and timeout bound the wait.
func startControllerManager(ctx context.Context, assets string, kubeconfig []byte, certDir string, opts Options, timeout time.Duration) (*controllerManager, error) {
	binary := filepath.Join(assets, ControllerManagerBinary)
	saKey := filepath.Join(certDir, saKeyFile)
	if !hasFlag(opts.ControllerManagerFlags, "service-account-private-key-file") {
		if _, err := os.Stat(saKey); err != nil {
			return nil, fmt.Errorf("testenv: kube-controller-manager needs the API server's service-account signing key: %w; "+
				"if envtest no longer writes it there, pass service-account-private-key-file in ControllerManagerFlags "+
				"(and the matching service-account-key-file in APIServerFlags)", err)
		}
	}
	dir, err := os.MkdirTemp("", "kopf-wasm-kcm-")
	if err != nil {
		return nil, fmt.Errorf("testenv: creating a folder for kube-controller-manager: %w", err)
	}
	kcfg := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcfg, kubeconfig, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: writing kube-controller-manager's kubeconfig: %w", err)
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}

	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	// The last line of its output says why it exited, if it does.
	tail := &lastLine{w: out}
	args := controllerManagerArgs(kcfg, saKey, filepath.Join(dir, "certs"), port, opts.Controllers, opts.ControllerManagerFlags)
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = tail, tail
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: starting %s: %w; run %s to build it", binary, err, BuildScript)
	}
	cm := &controllerManager{cmd: cmd, done: make(chan struct{}), dir: dir}
	go func() {
		cm.waitErr = cmd.Wait()
		close(cm.done)
	}()

	healthz := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/healthz?verbose"
	if err := waitControllersStarted(ctx, healthz, timeout, cm.done); err != nil {
		_ = cm.stop(5 * time.Second)
		why := tail.last()
		if why == "" {
			why = "no output"
		}
		select {
		case <-cm.done:
			return nil, fmt.Errorf("testenv: kube-controller-manager exited while starting (%s; set Output to see all of it): %w", why, exitError(cm.waitErr))
		default:
		}
		return nil, fmt.Errorf("testenv: kube-controller-manager did not start its controllers (last output: %s; set Output to see all of it): %w", why, err)
	}
	return cm, nil
}

// hasFlag reports whether flags (names with or without leading dashes) set
// name.
func hasFlag(flags map[string]string, name string) bool {
	for n := range flags {
		if strings.TrimLeft(n, "-") == name {
			return true
		}
	}
	return false
}

// errExited is returned by waitControllersStarted when the process exits.
var errExited = errors.New("kube-controller-manager exited")

// waitControllersStarted polls kube-controller-manager's /healthz?verbose
// until it answers 200 with a controller's check in it: the controllers'
// checks are added once they have all started, before that only "ping" is
// listed.
func waitControllersStarted(ctx context.Context, url string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Its serving certificate is self-signed; /healthz needs no credentials.
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a local health check
	}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "-controller ok") {
				return nil
			}
			last = fmt.Sprintf("%s answered %d", url, resp.StatusCode)
		} else {
			last = err.Error()
		}
		select {
		case <-exited:
			return errExited
		case <-ctx.Done():
			return fmt.Errorf("%w (%s)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, waits up to timeout, then kills the process, and
// removes its folder. An exit caused by the signal is not an error.
func (cm *controllerManager) stop(timeout time.Duration) error {
	defer os.RemoveAll(cm.dir)
	select {
	case <-cm.done:
		return nil // already exited; start reports why
	default:
	}
	_ = cm.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-cm.done:
		return nil
	case <-time.After(timeout):
	}
	_ = cm.cmd.Process.Kill()
	<-cm.done
	return fmt.Errorf("testenv: kube-controller-manager did not stop within %v of SIGTERM; killed it", timeout)
}

// exitError describes how a process ended (nil: it exited with status 0).
func exitError(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// freePort returns a TCP port on 127.0.0.1 that nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testenv: finding a free port for kube-controller-manager: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
