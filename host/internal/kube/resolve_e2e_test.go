package kube

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestE2EConnect(t *testing.T) {
	env := cluster(t)
	cfg, err := LoadConfig(env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if st := c.Stats(); st.Reads != 1 || st.Writes != 0 {
		t.Errorf("stats after a ping = %+v; want 1 read", st)
	}
}

func TestE2EResolve(t *testing.T) {
	c, _ := newClient(t)
	tests := []struct {
		sel        abi.ResourceSelector
		want       string
		namespaced bool
		status     bool
	}{
		{abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, "kopfexamples.v1.kopf.dev", true, true},
		{abi.ResourceSelector{Name: "kopfexamples"}, "kopfexamples.v1.kopf.dev", true, true},
		{abi.ResourceSelector{Name: "KopfExample"}, "kopfexamples.v1.kopf.dev", true, true},
		{abi.ResourceSelector{Name: "kex"}, "kopfexamples.v1.kopf.dev", true, true},
		{abi.ResourceSelector{Name: "kopfexamples.kopf.dev"}, "kopfexamples.v1.kopf.dev", true, true},
		{abi.ResourceSelector{Name: "pods"}, "pods.v1", true, true},
		{abi.ResourceSelector{Version: "v1", Name: "po"}, "pods.v1", true, true},
		{abi.ResourceSelector{Name: "configmap"}, "configmaps.v1", true, false},
		{abi.ResourceSelector{Name: "ns"}, "namespaces.v1", false, true},
		{abi.ResourceSelector{Name: "deploy"}, "deployments.v1.apps", true, true},
		{abi.ResourceSelector{Name: "customresourcedefinitions"}, "customresourcedefinitions.v1.apiextensions.k8s.io", false, true},
	}
	for _, tt := range tests {
		got, err := c.Resolve(t.Context(), tt.sel)
		if err != nil {
			t.Errorf("Resolve(%+v): %v", tt.sel, err)
			continue
		}
		if got.String() != tt.want || got.Namespaced != tt.namespaced || got.Status != tt.status {
			t.Errorf("Resolve(%+v) = %s namespaced %v status %v; want %s %v %v",
				tt.sel, got, got.Namespaced, got.Status, tt.want, tt.namespaced, tt.status)
		}
	}
	_, err := c.Resolve(t.Context(), abi.ResourceSelector{Name: "nosuchthings"})
	if !errors.Is(err, ErrNotServed) || !strings.Contains(err.Error(), "nosuchthings") {
		t.Errorf("Resolve(nosuchthings) = %v; want ErrNotServed naming it", err)
	}
}

// A CRD installed after discovery was cached is found: the miss refreshes.
func TestE2EResolveNewCRD(t *testing.T) {
	env := cluster(t)
	c, _ := newClient(t)
	if _, err := c.Resolve(t.Context(), abi.ResourceSelector{Name: "pods"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("testdata/widgets-crd.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := env.InstallCRDs("testdata/widgets-crd.yaml"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Resolve(t.Context(), abi.ResourceSelector{Name: "wdg"})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "widgets.v1.test.kopf.dev" || got.Namespaced || got.Status {
		t.Errorf("Resolve(wdg) = %+v", got)
	}
}
