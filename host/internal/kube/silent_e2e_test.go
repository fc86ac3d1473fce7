package kube

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestE2EQuietWatchKeepsConnections: a watch of a resource that nothing
// changes goes silent — after a streamed listing the API server sends no
// bookmark until the resource's cache passes the listing's resource
// version, which takes minutes on a quiet resource — while the API server
// is well. The watch is resumed, but it is not a stall (the host stays
// ready), and the connections of the other requests are kept: they answer
// a probe. Closing them cut every request in flight (the N=50,000
// benchmark: 16 patches retried 70 s after the start, the CRD watch
// silent).
func TestE2EQuietWatchKeepsConnections(t *testing.T) {
	_, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-quiet-watch")
	create(t, dyn, kexGVR, kex(ns, "q-1", nil))
	var logs syncBuffer
	opts := withSettings(func(s *settings.Settings) {
		s.Watching.InactivityTimeout = 2 * time.Second // shorter than the API server's bookmarks (a minute)
		s.Watching.WatchList = true
		s.Kube.ConnProbeTimeout = 10 * time.Second // a loaded machine's slow probe is no stall
	})
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := New(cluster(t).Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inf := c.newInformer(kexGVR, ns)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(stop) }()
	defer func() { close(stop); <-done }()

	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(logs.String(), "no event or bookmark on a watch stream while the API server answers") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no watch went silent twice within 30s; the test shows nothing. Log:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !inf.HasSynced() || len(inf.GetStore().List()) != 1 {
		t.Errorf("the informer synced %v with %d objects, want 1", inf.HasSynced(), len(inf.GetStore().List()))
	}
	out := logs.String()
	if strings.Contains(out, "closing the connections") {
		t.Errorf("a quiet watch closed the connections of the other requests:\n%s", out)
	}
	if strings.Contains(out, "watch stream silent;") || len(c.Stalled()) > 0 {
		t.Errorf("a quiet watch was taken for a stall (stalled: %v):\n%s", c.Stalled(), out)
	}
}
