package kube

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:1"}
- name: c2
  cluster: {server: "https://127.0.0.2:2"}
users:
- name: u
  user: {token: abc}
contexts:
- name: one
  context: {cluster: c1, user: u}
- name: two
  context: {cluster: c2, user: u}
current-context: one
`

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(good, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("{{{not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, context string
		host                string // on success
		errHas              string
	}{
		{name: "current context", path: good, host: "https://127.0.0.1:1"},
		{name: "named context", path: good, context: "two", host: "https://127.0.0.2:2"},
		{name: "missing context", path: good, context: "three", errHas: `context "three" does not exist`},
		{name: "missing file", path: filepath.Join(dir, "nope"), errHas: "does not exist"},
		{name: "a folder", path: dir, errHas: "is a folder"},
		{name: "not a kubeconfig", path: garbage, errHas: garbage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(tt.path, tt.context)
			if tt.errHas != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.errHas) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("LoadConfig = %v; want a one-line ErrConfig containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.host || cfg.BearerToken != "abc" {
				t.Errorf("host %q token %q; want %q abc", cfg.Host, cfg.BearerToken, tt.host)
			}
		})
	}
}

func TestLoadConfigNothing(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := LoadConfig("", "")
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "no kubeconfig found") {
		t.Fatalf("LoadConfig with nothing = %v", err)
	}
}

func TestPingUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := New(&rest.Config{Host: "http://" + addr}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(t.Context())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Ping = %v; want a one-line ErrUnreachable naming %s", err, addr)
	}
}
