package kube

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

func TestStallTracker(t *testing.T) {
	c := &Client{stalls: newStallTracker()}
	closed := 0
	c.stalls.onStall = []func(){func() { closed++ }}
	ws := watchScope{resource: "widgets.v1.example.com", namespace: "stall-unit"}
	gauge := func() float64 {
		v, _ := metrics.Sample("kopf_wasm_watch_stalled", "resource", ws.resource, "namespace", ws.namespace)
		return v
	}
	total := func() float64 {
		v, _ := metrics.Sample("kopf_wasm_watch_stalls_total", "resource", ws.resource, "namespace", ws.namespace)
		return v
	}
	if s := c.Stalled(); len(s) != 0 {
		t.Fatalf("stalled before any stall: %v", s)
	}
	c.stalls.stall(ws)
	c.stalls.stall(ws) // the resumed request is unanswered too: still one stall
	if s := c.Stalled(); len(s) != 1 || !strings.HasPrefix(s[0], "widgets.v1.example.com in stall-unit (silent since ") {
		t.Errorf("Stalled() = %q, want the watch named", s)
	}
	if gauge() != 1 || total() != 1 {
		t.Errorf("stalled: gauge %v, total %v; want 1 and 1", gauge(), total())
	}
	if closed != 2 {
		t.Errorf("onStall called %d times, want at each stall (2)", closed)
	}
	c.stalls.resume(ws)
	if s := c.Stalled(); len(s) != 0 {
		t.Errorf("stalled after the watch resumed: %v", s)
	}
	if gauge() != 0 || total() != 1 {
		t.Errorf("resumed: gauge %v, total %v; want 0 and 1", gauge(), total())
	}
}

func TestVerbOf(t *testing.T) {
	cases := []struct{ method, url, want string }{
		{"GET", "/api/v1/namespaces/ns/configmaps", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps/x", "get"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true", "watch"},
		{"GET", "/api/v1/namespaces", "list"},
		{"GET", "/api/v1/namespaces/ns", "get"},
		{"GET", "/apis/kopf.dev/v1/kopfexamples", "list"},
		{"GET", "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x/status", "get"},
		{"GET", "/version", "get"},
		{"POST", "/api/v1/namespaces/ns/events", "create"},
		{"PUT", "/api/v1/namespaces/ns/configmaps/x", "update"},
		{"PATCH", "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x", "patch"},
		{"DELETE", "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x", "delete"},
	}
	for _, tc := range cases {
		req, err := http.NewRequest(tc.method, "https://h"+tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := verbOf(req); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
}

// A watch stopped while stalled (a swap or a rescan dropped its resource)
// is no longer stalled: the mark would fail readiness for good.
func TestStoppedWatchIsNotStalled(t *testing.T) {
	c := &Client{stalls: newStallTracker()}
	res := Resource{ResourceRef: abi.ResourceRef{Group: "example.com", Version: "v1", Plural: "gizmos", Namespaced: true}}
	w := &Watch{c: c, res: res}
	c.stalls.stall(watchScope{resource: gvrString(res.GVR()), namespace: "a"})
	c.stalls.stall(watchScope{resource: gvrString(res.GVR()), namespace: "b"})
	w.unstall("a")
	if s := c.Stalled(); len(s) != 1 || !strings.HasPrefix(s[0], "gizmos.v1.example.com in b ") {
		t.Errorf("after stopping the scope in a: %q, want only b stalled", s)
	}
}
