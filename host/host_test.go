package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, err string
	}{
		{name: "example", path: wasmtest.Path(t, "kopfexample")},
		{name: "not wasm", path: writeFile(t, dir, "x.wasm", "hello"), err: "not a WebAssembly module"},
		{name: "other ABI", path: wasmtest.Path(t, "testguests/wrongabi"), err: "rebuild the module with a guest SDK for ABI v1"},
		{name: "missing", path: filepath.Join(dir, "nope.wasm"), err: "no such file or folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, digest, err := Inspect(t.Context(), tt.path, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error = %v, want one line with %q", err, tt.err)
				}
				return
			}
			if err != nil || m.Module.Name != "kopfexample" || len(m.Handlers) != 3 || !strings.HasPrefix(digest, "sha256:") {
				t.Errorf("Inspect = %+v, %q, %v", m, digest, err)
			}
		})
	}
}

func TestInvoke(t *testing.T) {
	mod := wasmtest.Path(t, "kopfexample")
	obj := []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"ex","namespace":"default"},"spec":{"field":"a"}}`)
	req, resp, err := Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: "create_fn", Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	if req.Reason != abi.ReasonCreate || resp.Outcome.Status != abi.OutcomeSuccess || string(resp.Result) != `{"message":"hello world"}` {
		t.Errorf("request %+v, response %+v (result %s)", req, resp, resp.Result)
	}
	for _, id := range []string{"nope", ""} {
		_, _, err = Invoke(t.Context(), Invocation{Settings: cached(t), Module: mod, Handler: id, Object: obj})
		if !errors.Is(err, ErrNoHandler) || !strings.Contains(err.Error(), "create_fn, delete_fn, update_fn") {
			t.Errorf("handler %q: error = %v, want ErrNoHandler listing the ids", id, err)
		}
	}
}

func TestRunRefusesEarly(t *testing.T) {
	dir := t.TempDir()
	mod := wasmtest.Path(t, "testguests/good")
	unreachable := writeFile(t, dir, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	both := settings.Default()
	both.Sharding.Enabled, both.LeaderElection.Enabled = true, true
	badLease := settings.Default().LeaderElection
	badLease.Enabled, badLease.RenewDeadline = true, badLease.LeaseDuration*2
	tests := []struct {
		name  string
		opts  Options
		class error
		err   string
	}{
		{name: "no modules", opts: Options{Kubeconfig: unreachable}, class: ErrUsage, err: "no modules"},
		{name: "-n with -A", opts: Options{Modules: []string{mod}, Namespaces: []string{"a"}, AllNamespaces: true},
			class: ErrUsage, err: "mutually exclusive"},
		{name: "bad pattern", opts: Options{Modules: []string{mod}, Namespaces: []string{"[a"}}, class: ErrUsage},
		{name: "missing kubeconfig", opts: Options{Modules: []string{mod}, Kubeconfig: filepath.Join(dir, "nope")},
			class: ErrKubeconfig, err: "does not exist"},
		{name: "garbage kubeconfig", opts: Options{Modules: []string{mod}, Kubeconfig: writeFile(t, dir, "garbage", "{{{")},
			class: ErrKubeconfig, err: "kubeconfig"},
		{name: "unknown context", opts: Options{Modules: []string{mod}, Kubeconfig: unreachable, KubeContext: "nope"},
			class: ErrKubeconfig, err: "nope"},
		{name: "not wasm", opts: Options{Modules: []string{writeFile(t, dir, "x.wasm", "hello")}, Kubeconfig: unreachable},
			err: "not a WebAssembly module"},
		{name: "unreachable", opts: Options{Modules: []string{mod}, Kubeconfig: unreachable},
			class: ErrUnreachable, err: "127.0.0.1:1"},
		{name: "sharding with leader election", opts: Options{Modules: []string{mod}, Kubeconfig: unreachable, Settings: &both},
			class: ErrUsage, err: "exclude each other"},
		{name: "sharding with leader election, as Options groups", opts: Options{Modules: []string{mod}, Kubeconfig: unreachable,
			Sharding: &both.Sharding, LeaderElection: &both.LeaderElection}, class: ErrUsage, err: "exclude each other"},
		{name: "a bad lease as an Options group", opts: Options{Modules: []string{mod}, Kubeconfig: unreachable,
			LeaderElection: &badLease}, class: ErrUsage, err: "settings"},
		{name: "bad liveness URL", opts: Options{Modules: []string{mod}, Kubeconfig: unreachable, Health: HealthOptions{Liveness: "ftp://x"}},
			class: ErrUsage, err: "liveness"},
	}
	set := settings.Default()
	set.Wasm.CacheDir = t.TempDir() // compile once for all cases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Logger = discardLogger
			if tt.opts.Settings == nil {
				tt.opts.Settings = &set
			}
			err := Run(t.Context(), tt.opts)
			if err == nil || (tt.class != nil && !errors.Is(err, tt.class)) || !strings.Contains(err.Error(), tt.err) ||
				strings.Contains(err.Error(), "\n") {
				t.Errorf("Run: %v; want one line with %q (class %v)", err, tt.err, tt.class)
			}
		})
	}
}
